//! One measured configuration: throughput and latency figures, the gdsio-style text line and
//! the JSON object of `hipfile bench`.

use std::time::Duration;

use crate::json::Value;

/// The raw outcome of one run: every operation's latency and the wall time of the whole run.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunResult {
    /// Per-operation latency in microseconds.
    pub latencies_us: Vec<f64>,
    /// Bytes moved.
    pub bytes: u64,
    /// From the first thread's start to the last thread's end.
    pub elapsed: Duration,
    /// CPU time (user + system) of the whole process over the run.
    pub cpu: Duration,
}

/// A measurement as reported.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Measurement {
    /// `READ`, `WRITE`, `RANDREAD`, `RANDWRITE`.
    pub io_type: &'static str,
    /// `HIPFILE`, `PREAD_1T`, `PREAD_NT` (`PWRITE_*` for write modes).
    pub xfer_type: &'static str,
    /// Threads issuing operations.
    pub threads: usize,
    /// Bytes moved.
    pub dataset_bytes: u64,
    /// Bytes requested (`--size`).
    pub dataset_total_bytes: u64,
    /// Bytes per operation.
    pub io_size_bytes: u64,
    /// Throughput in GiB/s.
    pub gib_per_s: f64,
    /// Mean latency (µs).
    pub avg_latency_us: f64,
    /// Median latency (µs).
    pub p50_latency_us: f64,
    /// 99th percentile latency (µs).
    pub p99_latency_us: f64,
    /// Operations.
    pub ops: u64,
    /// Wall time (s).
    pub total_time_s: f64,
    /// Throughput of every repetition, in run order (the reported run is the median one).
    pub runs_gib_per_s: Vec<f64>,
    /// CPU seconds (user + system, every thread of the process) per GiB moved; 0 when
    /// nothing moved.
    pub cpu_s_per_gib: f64,
}

/// What a measurement is of (everything but the figures).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Label {
    /// See [`Measurement::io_type`].
    pub io_type: &'static str,
    /// See [`Measurement::xfer_type`].
    pub xfer_type: &'static str,
    /// See [`Measurement::threads`].
    pub threads: usize,
    /// See [`Measurement::dataset_total_bytes`].
    pub dataset_total_bytes: u64,
    /// See [`Measurement::io_size_bytes`].
    pub io_size_bytes: u64,
}

/// The `p`-th percentile (0–100) of sorted values, nearest-rank; 0 when empty.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Measurement {
    /// Figures of one run.
    pub(crate) fn from_run(label: Label, run: &RunResult) -> Measurement {
        let mut lat = run.latencies_us.clone();
        lat.sort_by(f64::total_cmp);
        let secs = run.elapsed.as_secs_f64();
        let gib = run.bytes as f64 / (1u64 << 30) as f64;
        Measurement {
            io_type: label.io_type,
            xfer_type: label.xfer_type,
            threads: label.threads,
            dataset_bytes: run.bytes,
            dataset_total_bytes: label.dataset_total_bytes,
            io_size_bytes: label.io_size_bytes,
            gib_per_s: if secs > 0.0 { gib / secs } else { 0.0 },
            avg_latency_us: if lat.is_empty() {
                0.0
            } else {
                lat.iter().sum::<f64>() / lat.len() as f64
            },
            p50_latency_us: percentile(&lat, 50.0),
            p99_latency_us: percentile(&lat, 99.0),
            ops: lat.len() as u64,
            total_time_s: secs,
            runs_gib_per_s: Vec::new(),
            cpu_s_per_gib: if gib > 0.0 {
                run.cpu.as_secs_f64() / gib
            } else {
                0.0
            },
        }
    }

    /// The median of several runs of one configuration: the run whose throughput is the median
    /// (the lower middle one for an even count), reported whole so its figures agree with each
    /// other; `runs_gib_per_s` lists every run.
    pub(crate) fn median(label: Label, runs: &[RunResult]) -> Measurement {
        assert!(!runs.is_empty(), "at least one run");
        let all: Vec<Measurement> = runs
            .iter()
            .map(|r| Measurement::from_run(label, r))
            .collect();
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.sort_by(|&a, &b| all[a].gib_per_s.total_cmp(&all[b].gib_per_s));
        let mut m = all[order[(all.len() - 1) / 2]].clone();
        m.runs_gib_per_s = all.iter().map(|x| x.gib_per_s).collect();
        m
    }

    /// The gdsio-style line, with the median and 99th-percentile latency after the mean.
    /// Sizes are in KiB as gdsio gives them when they are whole KiB, else in bytes (`(B)`).
    pub(crate) fn gdsio_line(&self) -> String {
        let kib = |n: u64| n % 1024 == 0;
        let moved = if kib(self.dataset_bytes) && kib(self.dataset_total_bytes) {
            format!(
                "{}/{}(KiB)",
                self.dataset_bytes / 1024,
                self.dataset_total_bytes / 1024
            )
        } else {
            format!("{}/{}(B)", self.dataset_bytes, self.dataset_total_bytes)
        };
        let io = if kib(self.io_size_bytes) {
            format!("{}(KiB)", self.io_size_bytes / 1024)
        } else {
            format!("{}(B)", self.io_size_bytes)
        };
        format!(
            "IoType: {} XferType: {} Threads: {} DataSetSize: {moved} IOSize: {io} Throughput: {:.4} GiB/sec, Avg_Latency: {:.2} usecs p50_Latency: {:.2} usecs p99_Latency: {:.2} usecs ops: {} total_time {:.4} secs",
            self.io_type,
            self.xfer_type,
            self.threads,
            self.gib_per_s,
            self.avg_latency_us,
            self.p50_latency_us,
            self.p99_latency_us,
            self.ops,
            self.total_time_s
        )
    }

    /// The JSON object.
    pub(crate) fn to_json(&self) -> Value {
        Value::obj()
            .with("io_type", self.io_type)
            .with("xfer_type", self.xfer_type)
            .with("threads", self.threads)
            .with("dataset_bytes", self.dataset_bytes)
            .with("dataset_total_bytes", self.dataset_total_bytes)
            .with("io_size_bytes", self.io_size_bytes)
            .with("gib_per_s", self.gib_per_s)
            .with("avg_latency_us", self.avg_latency_us)
            .with("p50_latency_us", self.p50_latency_us)
            .with("p99_latency_us", self.p99_latency_us)
            .with("ops", self.ops)
            .with("total_time_s", self.total_time_s)
            .with("runs_gib_per_s", self.runs_gib_per_s.clone())
            .with("cpu_s_per_gib", self.cpu_s_per_gib)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABEL: Label = Label {
        io_type: "READ",
        xfer_type: "HIPFILE",
        threads: 1,
        dataset_total_bytes: 1 << 30,
        io_size_bytes: 256 << 20,
    };

    fn run(secs: f64, lat: &[f64]) -> RunResult {
        RunResult {
            latencies_us: lat.to_vec(),
            bytes: 1 << 30,
            elapsed: Duration::from_secs_f64(secs),
            cpu: Duration::from_millis(250),
        }
    }

    #[test]
    fn gdsio_line_format() {
        let m = Measurement::from_run(
            LABEL,
            &run(0.2078, &[51234.56, 51234.56, 51234.56, 51234.56]),
        );
        assert_eq!(
            m.gdsio_line(),
            "IoType: READ XferType: HIPFILE Threads: 1 DataSetSize: 1048576/1048576(KiB) IOSize: 262144(KiB) \
             Throughput: 4.8123 GiB/sec, Avg_Latency: 51234.56 usecs p50_Latency: 51234.56 usecs \
             p99_Latency: 51234.56 usecs ops: 4 total_time 0.2078 secs"
        );
    }

    #[test]
    fn small_sizes_are_in_bytes() {
        let label = Label {
            dataset_total_bytes: 12288,
            io_size_bytes: 3,
            ..LABEL
        };
        let mut r = run(1.0, &[1.0, 2.0, 3.0, 10.0]);
        r.bytes = 12288;
        let line = Measurement::from_run(label, &r).gdsio_line();
        assert!(
            line.contains(" DataSetSize: 12/12(KiB) IOSize: 3(B) "),
            "{line}"
        );
        assert!(
            line.contains(
                " Avg_Latency: 4.00 usecs p50_Latency: 2.00 usecs p99_Latency: 10.00 usecs "
            ),
            "{line}"
        );
        let label = Label {
            dataset_total_bytes: 1_050_000,
            io_size_bytes: 3000,
            ..LABEL
        };
        r.bytes = 1_050_000;
        let line = Measurement::from_run(label, &r).gdsio_line();
        assert!(
            line.contains(" DataSetSize: 1050000/1050000(B) IOSize: 3000(B) "),
            "{line}"
        );
    }

    #[test]
    fn percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 100.0), 100.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    #[test]
    fn median_run_is_reported_whole() {
        let runs = [run(2.0, &[1.0]), run(0.5, &[2.0]), run(1.0, &[3.0])];
        let m = Measurement::median(LABEL, &runs);
        assert_eq!(m.total_time_s, 1.0);
        assert_eq!(m.avg_latency_us, 3.0);
        assert_eq!(m.runs_gib_per_s, vec![0.5, 2.0, 1.0]);
        let two = Measurement::median(LABEL, &runs[..2]);
        assert_eq!(two.total_time_s, 2.0, "lower middle of an even count");
    }

    #[test]
    fn json_has_the_keys() {
        let m = Measurement::from_run(LABEL, &run(1.0, &[10.0, 20.0]));
        let text = m.to_json().to_json();
        for key in [
            "io_type",
            "xfer_type",
            "threads",
            "dataset_bytes",
            "io_size_bytes",
            "gib_per_s",
            "avg_latency_us",
            "p50_latency_us",
            "p99_latency_us",
            "ops",
            "total_time_s",
        ] {
            assert!(
                text.contains(&format!("\"{key}\":")),
                "{key} missing in {text}"
            );
        }
        assert!(text.contains("\"gib_per_s\":1,"), "{text}");
        assert!(text.contains("\"avg_latency_us\":15,"), "{text}");
        assert!(text.contains("\"cpu_s_per_gib\":0.25"), "{text}");
    }

    #[test]
    fn cpu_per_gib() {
        let mut r = run(1.0, &[1.0]);
        r.bytes = 4 << 30;
        assert_eq!(Measurement::from_run(LABEL, &r).cpu_s_per_gib, 0.0625);
        r.bytes = 0;
        assert_eq!(Measurement::from_run(LABEL, &r).cpu_s_per_gib, 0.0);
    }
}
