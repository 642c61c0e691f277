/*
 * hipfile-stats.h - reading the statistics of another hipFile process.
 *
 * Every process using libhipfile.so.0 publishes its I/O counters in a shared-memory
 * block and serves that block on an abstract UNIX socket named after its pid.  These
 * functions (exported by libhipfile.so.0, as in AMD's hipFile) attach to such a process
 * and print a text report of its counters; the `hipfile stats` command and AMD's
 * ais-stats tool are built on them.  Upstream does not install a header for them; this
 * one declares the same ABI.  Requires Linux 5.3 or later (pidfd_open).
 *
 * Typical use: hipFileStatsCreateContext(&ctx, pid); hipFileStatsConnectToTargetProcess(ctx);
 * hipFileStatsPollTargetProcess(ctx, true) to wait for the target to exit;
 * hipFileStatsGenerateReport(ctx, STDOUT_FILENO); hipFileStatsCloseContext(ctx).
 */

#pragma once
#ifndef HIPFILE_STATS_H
#define HIPFILE_STATS_H

#include "hipfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A connection to one target process; created and freed by the functions below. */
typedef struct hipFileStatsContext hipFileStatsContext_t;

/* Outcome of the hipFileStats* functions. */
typedef enum hipFileStatsError {
    hipFileStatsSuccess = 0,
    hipFileStatsInvalidArgument = 1,
    hipFileStatsTargetProcessNotFound = 2,
    hipFileStatsTargetProcessNotAccessible = 3,
    hipFileStatsReportGenerationFailed = 4
} hipFileStatsError_t;

/**
 * Creates a context for the process `targetPid` and stores it in `*context`.
 * Returns hipFileStatsSuccess; hipFileStatsInvalidArgument for NULL `context` or
 * `targetPid <= 0` (then `*context` is set to NULL); hipFileStatsTargetProcessNotFound
 * when no such process exists; hipFileStatsTargetProcessNotAccessible when the kernel
 * cannot watch it.
 */
HIPFILE_API hipFileStatsError_t hipFileStatsCreateContext(hipFileStatsContext_t **context, int targetPid);

/** Frees a context and everything it holds.  NULL is ignored. */
HIPFILE_API void hipFileStatsCloseContext(hipFileStatsContext_t *context);

/**
 * Connects to the target's statistics socket, retrying until it answers or exits, and
 * receives its shared statistics block.
 * Returns hipFileStatsSuccess; hipFileStatsInvalidArgument for NULL;
 * hipFileStatsTargetProcessNotAccessible when no block could be obtained.
 */
HIPFILE_API hipFileStatsError_t hipFileStatsConnectToTargetProcess(hipFileStatsContext_t *context);

/**
 * Checks whether the target has exited, waiting for it when `block` is true.
 * Returns hipFileStatsSuccess once it has exited; hipFileStatsInvalidArgument for
 * NULL; hipFileStatsTargetProcessNotAccessible while it is still running.
 */
HIPFILE_API hipFileStatsError_t hipFileStatsPollTargetProcess(const hipFileStatsContext_t *context, bool block);

/**
 * Writes a text report of the target's counters to the file descriptor `fd`.
 * Returns hipFileStatsSuccess; hipFileStatsInvalidArgument for NULL `context` or a
 * negative `fd`; hipFileStatsReportGenerationFailed when the block cannot be read or
 * the report cannot be written.
 */
HIPFILE_API hipFileStatsError_t hipFileStatsGenerateReport(const hipFileStatsContext_t *context, int fd);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPFILE_STATS_H */
