//! `loadlab target`: the built-in system under test, in the foreground until Ctrl-C.

use crate::cli::TargetArgs;
use crate::exit::{CliError, Outcome};
use loadlab_builtin_target::{Degrade, LlmConfig, ServiceDist, Stall, TargetConfig, TargetTls};

pub fn config_from(args: &TargetArgs) -> Result<TargetConfig, CliError> {
    let listen = args.listen.parse().map_err(|_| {
        CliError::bad_input(format!(
            "--listen: `{}` is not an address like 127.0.0.1:8080",
            args.listen
        ))
    })?;
    let service_dist: ServiceDist = args
        .service_dist
        .parse()
        .map_err(|e| CliError::bad_input(format!("--service-dist: {e}")))?;
    let mut config = TargetConfig {
        listen,
        workers: args.workers,
        service_time: args.service_time,
        service_dist,
        queue_limit: args.queue_limit,
        error_rate: args.error_rate,
        reuse_port: args.reuse_port,
        ..TargetConfig::default()
    };
    if let (Some(after), Some(service_time)) = (args.degrade_after, args.degraded_service_time) {
        config.degrade = Some(Degrade {
            after,
            service_time,
        });
    }
    if let (Some(every), Some(length)) = (args.stall_every, args.stall_for) {
        let stall = Stall { every, length };
        if stall.length.is_zero() || stall.length >= stall.every {
            return Err(CliError::bad_input(
                "--stall-for must be above zero and shorter than --stall-every (e.g. --stall-every 5s --stall-for 1s)",
            ));
        }
        config.stall = Some(stall);
    }
    config.llm = LlmConfig {
        batch: args.batch,
        step_time: args.step_time,
        step_per_seq: args.step_per_seq,
        prefill_per_token: args.prefill_per_token,
        ..LlmConfig::default()
    };
    if let Some(t) = args.threads {
        config.threads = t;
    }
    config.tls = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => Some(TargetTls::Files {
            cert: cert.clone(),
            key: key.clone(),
        }),
        _ if args.tls => Some(TargetTls::SelfSigned),
        _ => None,
    };
    config.validate().map_err(CliError::bad_input)?;
    Ok(config)
}

pub fn execute(args: TargetArgs) -> Result<Outcome, CliError> {
    let config = config_from(&args)?;
    loadlab_builtin_target::run_until_ctrl_c(config).map_err(CliError::bad_input)?;
    Ok(Outcome::Ok)
}
