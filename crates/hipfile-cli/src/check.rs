//! `hipfile check` (minimal): which GPU runtime the library chose and why, what the loader
//! tried, whether GPU-direct entry points exist, and the engine configuration.

use hipfile::driver::config::Config;
use hipfile::runtime::loader;

use crate::json::Value;
use crate::util::{fmt_bytes, CliResult};
use crate::CheckArgs;

/// The configuration as a JSON object (also used by `bench`).
pub fn config_json(c: &Config) -> Value {
    Value::obj()
        .with("io_threads", c.io_threads)
        .with("chunk_size", c.chunk_size)
        .with("bounce_budget", c.bounce_budget)
        .with("inline_threshold", c.inline_threshold)
        .with("async_buffer_size", c.async_buffer_size)
        .with("allow_compat", c.allow_compat)
        .with("force_compat", c.force_compat)
        .with("unsupported_fs", c.unsupported_fs)
        .with("host_io", c.host_io)
        .with("sync_writes", c.sync_writes)
        .with("stats_level", c.stats_level)
}

/// Run `hipfile check`.
pub fn run(args: &CheckArgs) -> CliResult<()> {
    let choice = loader::choice();
    let rt = &*choice.runtime;
    let config = hipfile::driver::driver().config();
    if args.json {
        let v = Value::obj()
            .with("platform", rt.platform().name())
            .with("runtime", rt.describe())
            .with("simulated", rt.is_simulated())
            .with("reason", choice.reason.as_str())
            .with("attempts", choice.attempts.clone())
            .with("device_count", rt.device_count())
            .with("runtime_version", rt.version())
            .with("gpu_direct_entry_points", rt.has_fastpath())
            .with("config", config_json(&config));
        println!("{}", v.to_json());
        return Ok(());
    }
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    println!("platform:        {}", rt.platform().name());
    println!("runtime:         {}", rt.describe());
    if rt.is_simulated() {
        println!("                 SIMULATED GPU runtime (hipsim): test and demo use only, no real GPU is involved");
    }
    println!("simulated:       {}", yes_no(rt.is_simulated()));
    println!("chosen because:  {}", choice.reason);
    if choice.attempts.is_empty() {
        println!("loader attempts: none needed");
    } else {
        println!("loader attempts:");
        for a in &choice.attempts {
            println!("  - {a}");
        }
    }
    println!("devices:         {}", rt.device_count());
    println!("runtime version: {}", rt.version());
    println!(
        "GPU-direct I/O entry points: {}",
        if rt.has_fastpath() {
            "present"
        } else {
            "absent"
        }
    );
    println!("configuration:");
    println!("  engine threads:     {}", config.io_threads);
    println!(
        "  chunk size:         {}",
        fmt_bytes(config.chunk_size as u64)
    );
    println!(
        "  bounce budget:      {}",
        fmt_bytes(config.bounce_budget as u64)
    );
    println!(
        "  inline threshold:   {}",
        fmt_bytes(config.inline_threshold as u64)
    );
    println!(
        "  async buffer size:  {}",
        fmt_bytes(config.async_buffer_size as u64)
    );
    println!(
        "  compat mode:        allowed {}, forced {}",
        yes_no(config.allow_compat),
        yes_no(config.force_compat)
    );
    println!("  unsupported fs:     {}", yes_no(config.unsupported_fs));
    println!("  host memory I/O:    {}", yes_no(config.host_io));
    println!("  durable writes:     {}", yes_no(config.sync_writes));
    println!("  stats level:        {}", config.stats_level);
    Ok(())
}
