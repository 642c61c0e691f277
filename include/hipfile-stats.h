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

/** Outcome of the hipFileStats* functions (not a hipFileOpError_t). */
typedef enum hipFileStatsError {
    /** The call succeeded (for hipFileStatsPollTargetProcess(): the target has exited). */
    hipFileStatsSuccess = 0,
    /**
     * A NULL context (or context pointer), a target pid that is not positive, or a negative file
     * descriptor.
     */
    hipFileStatsInvalidArgument = 1,
    /** hipFileStatsCreateContext(): no process has that pid. */
    hipFileStatsTargetProcessNotFound = 2,
    /**
     * The target cannot be watched or read: the kernel lacks pidfd_open (ENOSYS), the caller is out
     * of descriptors or memory (errno EMFILE, ENFILE or ENOMEM), the target serves no statistics
     * (it does not use the library, or exited first), or it is still running (poll).
     */
    hipFileStatsTargetProcessNotAccessible = 3,
    /**
     * The context is not connected, the statistics block cannot be read, or writing the report
     * failed (errno says why; EPIPE for a pipe without a reader, never SIGPIPE).
     */
    hipFileStatsReportGenerationFailed = 4
} hipFileStatsError_t;

/*
 * Thread safety of the functions below: they need no driver reference and may be called from
 * any thread, but one context must not be used by two threads at the same time, and it must
 * not be used after hipFileStatsCloseContext().  Each returns
 * hipFileStatsTargetProcessNotAccessible (hipFileStatsGenerateReport():
 * hipFileStatsReportGenerationFailed) when an internal failure is caught.
 */

/**
 * @brief Creates a context that watches another process.
 *
 * Opens a pidfd on the target, so that a later poll can tell when it exits.  Nothing is read
 * from it yet.
 *
 * @param context    Receives the new context; set to NULL on every failure after the NULL
 *                   check.
 * @param targetPid  The process to watch.
 * @return hipFileStatsSuccess, or one of the codes below.
 * @retval hipFileStatsInvalidArgument             `context` is NULL, or `targetPid` is not
 *                                                 positive.
 * @retval hipFileStatsTargetProcessNotFound       No process has that pid.
 * @retval hipFileStatsTargetProcessNotAccessible  The kernel lacks pidfd_open, or the caller is
 *                                                 out of descriptors or memory (errno EMFILE,
 *                                                 ENFILE or ENOMEM: the target may well exist).
 * @par Thread safety
 * Safe from any thread.
 * @par Differences
 * As AMD's hipFile; EMFILE is "not accessible" with errno set, not "not found".
 */
HIPFILE_API hipFileStatsError_t hipFileStatsCreateContext(hipFileStatsContext_t **context, int targetPid);

/**
 * @brief Frees a context and its descriptors and mappings.
 *
 * @param context  A context from hipFileStatsCreateContext(), or NULL (ignored).
 * @par Thread safety
 * No other thread may be using the context.
 * @par Differences
 * As AMD's hipFile.
 */
HIPFILE_API void hipFileStatsCloseContext(hipFileStatsContext_t *context);

/**
 * @brief Connects to the target's statistics server and maps its statistics block.
 *
 * Connects to the abstract UNIX socket the target serves (named after its pid), retrying with
 * growing pauses until it answers or exits, and receives its shared-memory block.  Works with
 * processes using this library or AMD's.
 *
 * @param context  A context from hipFileStatsCreateContext().
 * @return hipFileStatsSuccess, or one of the codes below.
 * @retval hipFileStatsInvalidArgument             `context` is NULL.
 * @retval hipFileStatsTargetProcessNotAccessible  No block could be obtained (the target
 *                                                 exited, or never served statistics).
 * @par Thread safety
 * No other thread may be using the context.
 * @par Differences
 * As AMD's hipFile.
 */
HIPFILE_API hipFileStatsError_t hipFileStatsConnectToTargetProcess(hipFileStatsContext_t *context);

/**
 * @brief Tells whether the target has exited, optionally waiting for it.
 *
 * @param context  A context from hipFileStatsCreateContext().
 * @param block    Wait until the target exits.
 * @return hipFileStatsSuccess once the target has exited, or one of the codes below.
 * @retval hipFileStatsInvalidArgument             `context` is NULL.
 * @retval hipFileStatsTargetProcessNotAccessible  The target is still running (or its state
 *                                                 cannot be read).
 * @par Thread safety
 * No other thread may be using the context.
 * @par Differences
 * As AMD's hipFile.
 */
HIPFILE_API hipFileStatsError_t hipFileStatsPollTargetProcess(const hipFileStatsContext_t *context, bool block);

/**
 * @brief Writes a text report of the target's counters to a file descriptor.
 *
 * The report is the format AMD's ais-stats prints, written whole (EINTR retried).  The block
 * stays readable after the target exits, so a report can follow hipFileStatsPollTargetProcess().
 *
 * @param context  A connected context.
 * @param fd       Where to write.
 * @return hipFileStatsSuccess, or one of the codes below.
 * @retval hipFileStatsInvalidArgument         `context` is NULL or `fd` is negative.
 * @retval hipFileStatsReportGenerationFailed  The context is not connected, the block cannot
 *                                             be read, or the write failed (errno set; EPIPE
 *                                             for a pipe without a reader, never SIGPIPE).
 * @par Thread safety
 * No other thread may be using the context.
 * @par Differences
 * As AMD's hipFile; a closed pipe gives EPIPE instead of killing the process with SIGPIPE.
 */
HIPFILE_API hipFileStatsError_t hipFileStatsGenerateReport(const hipFileStatsContext_t *context, int fd);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIPFILE_STATS_H */
