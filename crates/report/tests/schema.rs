//! `docs/schema/run.v2.json` describes the run result exactly as serde writes it.

mod common;
mod samples;

use serde_json::{json, Value};

fn schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/schema/run.v2.json");
    let text = std::fs::read_to_string(path).expect("docs/schema/run.v2.json exists");
    serde_json::from_str(&text).expect("the schema is JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema()).expect("the schema is a valid draft 2020-12 schema")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

fn rendered(r: &loadlab_report::RunResult) -> Value {
    let mut out = Vec::new();
    loadlab_report::render_json(r, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn hand_built_results_validate() {
    let v = validator();
    for r in [common::sample(), common::sample_open_invalid()] {
        let doc = rendered(&r);
        assert_eq!(errors(&v, &doc), Vec::<String>::new());
    }
    // An empty run (nothing completed, no steps) is still a valid document.
    let mut empty = common::sample();
    empty.scenario_file = None;
    empty.target = None;
    empty.steps.clear();
    empty.groups.clear();
    empty.thresholds.clear();
    empty.intervals.clear();
    empty.errors.clear();
    empty.error_hints.clear();
    empty.error_examples.clear();
    empty.status_codes.clear();
    empty.latency_ms = Default::default();
    assert_eq!(errors(&v, &rendered(&empty)), Vec::<String>::new());
    // The optional machine description validates, whether detected or partly unknown.
    let mut with_env = common::sample();
    with_env.environment = Some(loadlab_metrics::Environment::detect());
    assert_eq!(errors(&v, &rendered(&with_env)), Vec::<String>::new());
    with_env.environment = Some(loadlab_metrics::Environment {
        cpus: 1,
        ..Default::default()
    });
    assert_eq!(errors(&v, &rendered(&with_env)), Vec::<String>::new());
}

#[test]
fn every_required_key_is_serialized_and_every_property_is_described() {
    let schema = schema();
    let doc = rendered(&common::sample());
    let required = schema["required"].as_array().unwrap();
    assert!(!required.is_empty());
    for key in required {
        let key = key.as_str().unwrap();
        assert!(
            doc.get(key).is_some(),
            "required key `{key}` missing from the result"
        );
    }
    // Nothing the result writes is left out of the schema's required list
    // (except the optional ones, which must still be described).
    let optional = [
        "environment",
        "plan_hash",
        "segment",
        "server_latency_ms",
        "origins",
        "segments",
        "notes",
        "resources",
        "phases_ms",
        "vus_max",
    ];
    for key in optional {
        assert!(schema["properties"].get(key).is_some(), "{key}");
    }
    let doc_keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    for key in doc_keys {
        assert!(
            required.iter().any(|r| r == key) || optional.contains(&key.as_str()),
            "`{key}` is serialized but not required"
        );
    }
    // Every property, top level and in $defs, has a description.
    fn described(path: &str, props: &serde_json::Map<String, Value>) {
        for (name, p) in props {
            assert!(
                p.get("description")
                    .and_then(Value::as_str)
                    .is_some_and(|d| !d.is_empty()),
                "{path}.{name} has no description"
            );
        }
    }
    described("", schema["properties"].as_object().unwrap());
    for (name, def) in schema["$defs"].as_object().unwrap() {
        assert!(
            def.get("description").is_some(),
            "$defs.{name} has no description"
        );
        if let Some(props) = def.get("properties").and_then(Value::as_object) {
            described(name, props);
            assert_eq!(def["additionalProperties"], json!(false), "$defs.{name}");
        }
    }
}

#[test]
fn broken_documents_fail() {
    let v = validator();
    let good = rendered(&common::sample());
    let mut cases: Vec<(&str, Value)> = Vec::new();

    let mut doc = good.clone();
    doc.as_object_mut().unwrap().remove("valid");
    cases.push(("missing `valid`", doc));

    let mut doc = good.clone();
    doc["valid"] = json!("yes");
    cases.push(("`valid` is a string", doc));

    let mut doc = good.clone();
    doc["requests"]["total"] = json!(-1);
    cases.push(("negative count", doc));

    let mut doc = good.clone();
    doc["latency_ms"]["p95"] = json!("7ms");
    cases.push(("latency as text", doc));

    let mut doc = good.clone();
    doc["schema"] = json!("loadlab.run.v1");
    cases.push(("other schema version", doc));

    let mut doc = good.clone();
    doc["surprise"] = json!(1);
    cases.push(("unknown top-level key", doc));

    let mut doc = good.clone();
    doc["steps"][0]["latency_ms"]["p97"] = json!(1.0);
    cases.push(("unknown nested key", doc));

    let mut doc = good.clone();
    doc["errors"]["gremlins"] = json!(3);
    cases.push(("unknown error kind", doc));

    let mut doc = good.clone();
    doc["load"]["model"] = json!("constant");
    cases.push(("unknown load model", doc));

    let mut doc = good.clone();
    doc["thresholds"][0]["actual"] = json!("fast");
    cases.push(("threshold actual as text", doc));

    let mut doc = good.clone();
    doc["generator"]
        .as_object_mut()
        .unwrap()
        .remove("saturated");
    cases.push(("missing nested key", doc));

    let grpc = |status: &str| {
        json!({
            "status_codes": {status: 3},
            "messages_sent": 3,
            "messages_received": 3,
            "message_bytes_sent": 30,
            "message_bytes_received": 30,
            "first_message_ms": good["steps"][0]["latency_ms"].clone(),
        })
    };
    let mut doc = good.clone();
    doc["steps"][0]["grpc"] = grpc("FINE");
    cases.push(("unknown gRPC status", doc));
    let mut ok = good.clone();
    ok["steps"][0]["grpc"] = grpc("DEADLINE_EXCEEDED");
    assert_eq!(errors(&v, &ok), Vec::<String>::new());

    for (what, doc) in cases {
        assert!(!v.is_valid(&doc), "{what}: accepted");
    }
    // Nullable fields take null.
    let mut doc = good;
    doc["thresholds"][0]["actual"] = Value::Null;
    doc["load"]["max_vus"] = Value::Null;
    doc["steps"][0]["group"] = Value::Null;
    assert_eq!(errors(&v, &doc), Vec::<String>::new());
}

/// The requests of the built result: one of each error kind (traced, with an example), then
/// 1,000 timed successes over two steps and two origins.
fn recorded_traffic() -> loadlab_metrics::Recorder {
    use loadlab_metrics::{ErrorKind, Outcome, Recorder};
    let mut rec = Recorder::new(2);
    for (i, kind) in ErrorKind::ALL.iter().enumerate() {
        let status = match kind {
            ErrorKind::Http4xx => 404,
            ErrorKind::Http5xx => 503,
            _ => 0,
        };
        rec.begin((i % 2) as u16);
        rec.record(&Outcome {
            step: (i % 2) as u16,
            latency_us: 1_000 + i as u64 * 100,
            service_us: 900,
            lag_us: Some(50),
            server_us: Some(300),
            status,
            error: Some(*kind),
            bytes_sent: 100,
            bytes_received: 200,
            trace_id: Some(0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736 + i as u128),
            phases: Default::default(),
        });
        rec.note_error(*kind, || format!("example {kind}"));
    }
    for i in 0..1_000u64 {
        rec.begin((i % 2) as u16);
        rec.record(&Outcome {
            step: (i % 2) as u16,
            latency_us: 500 + i * 7,
            service_us: 400 + i * 7,
            lag_us: Some(i % 90),
            status: 200,
            phases: loadlab_metrics::Phases {
                connect_us: (i % 100 == 0).then_some(90),
                tls_us: (i % 100 == 0).then_some(700),
                waiting_us: Some(300 + i * 6),
                receiving_us: Some(40),
            },
            ..Outcome::default()
        });
        rec.iteration_completed(600 + i * 7);
    }
    // Two origins: one over h2c with shared connections, one that negotiated HTTP/1.1.
    rec.connections_opened(0, loadlab_metrics::Protocol::H2c, 4);
    rec.connections_opened(1, loadlab_metrics::Protocol::Http1, 2);
    rec.delayed_by_stream_limit();
    // Step a also made gRPC calls (a server stream, then a unary call that failed) and step b
    // held a WebSocket session: both protocols' figures are in the schema.
    let mut grpc = loadlab_metrics::GrpcCounts {
        messages_sent: 2,
        messages_received: 3,
        bytes_sent: 40,
        bytes_received: 90,
        ..Default::default()
    };
    grpc.add_ending(0, 1);
    rec.record_grpc(
        0,
        &grpc,
        Some(loadlab_metrics::GrpcCode::Unavailable),
        Some(700),
    );
    let mut ws = loadlab_metrics::WsCounts {
        messages_sent: 4,
        messages_received: 4,
        bytes_sent: 40,
        bytes_received: 40,
        ..Default::default()
    };
    ws.add_ending(1000, 1);
    rec.record_ws(1, &ws, Some(50_000));
    rec
}

/// The run's metadata as the engine writes it: an open model over two origins and two steps.
fn built_meta() -> loadlab_record::RecordMeta {
    use loadlab_metrics::result::LoadInfo;
    use loadlab_metrics::StepInfo;
    use loadlab_record::{RecordMeta, RECORD_SCHEMA};

    RecordMeta {
        schema: RECORD_SCHEMA.into(),
        tool_version: "test".into(),
        name: "built".into(),
        scenario_file: None,
        target: Some("http://127.0.0.1:8080".into()),
        start_unix_s: 1_795_305_600.0,
        warmup_s: 0.0,
        slice_s: 1.0,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Open,
            planned_duration_s: 35.0,
            peak_rate: Some(50.0),
            planned_arrivals: Some(1_750.0),
            max_in_flight: Some(100),
            planned: Some(loadlab_metrics::result::PlannedLoad {
                vus: false,
                points: vec![(0.0, 50.0), (35.0, 50.0)],
            }),
            ..LoadInfo::default()
        },
        plan_hash: "0".repeat(64),
        scenario: json!({}),
        segment: None,
        steerable: false,
        origins: vec![
            loadlab_record::OriginInfo {
                url: "http://127.0.0.1:8080".into(),
                version: "2".into(),
                shared_connections: Some(4),
                negotiated: Some(loadlab_metrics::Protocol::H2c),
            },
            loadlab_record::OriginInfo {
                url: "https://127.0.0.1:8443".into(),
                version: "auto".into(),
                shared_connections: None,
                negotiated: None,
            },
        ],
        steps: vec![
            StepInfo {
                name: "a".into(),
                group: Some("g".into()),
                tags: vec!["tier=1".into()],
                checks: vec!["status == 200".into()],
            },
            StepInfo {
                name: "b".into(),
                ..StepInfo::default()
            },
        ],
        data_sets: vec![],
        thresholds: vec![],
        environment: loadlab_metrics::Environment::detect(),
        threads: 1,
        cores: 2,
        max_cpu_percent: 90.0,
        max_lag_ms: 10.0,
        host_timer: None,
        cpus_allowed: vec![],
        batch_window_ms: None,
        reads_at_wakeups: false,
        pid: 1,
        merged_from: None,
        clock: None,
        imported: None,
    }
}

/// Resource samples as the monitor takes them: a busy host, a CPU-bound target, warnings.
fn resource_sample(end_ms: u64) -> loadlab_record::RecordedSample {
    loadlab_record::RecordedSample {
        segment: None,
        sample: loadlab_metrics::resources::Sample {
            elapsed_ms: end_ms,
            unix_ms: 1_795_305_600_000 + end_ms,
            interval_ms: 1000,
            values: [
                ("host.cpu_percent", 99.0),
                ("host.cpu_count", 2.0),
                ("host.core.0.cpu_percent", 98.0),
                ("generator.cpu_percent", 10.0),
                ("processes.target.cpu_percent", 99.0),
                ("processes.target.cpus_allowed", 1.0),
                ("processes.target.rss_bytes", 5e7),
                ("prometheus.app.http_requests_total{code=\"200\"}", 50.0),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            top_processes: vec![loadlab_metrics::resources::ProcessCpu {
                name: "stress-ng".into(),
                processes: 2,
                cpu_percent: 80.0,
            }],
            missing: vec!["cgroups.db".into()],
            warnings: vec![loadlab_metrics::resources::MonitorWarning {
                source: "cgroups.db".into(),
                message: "no such cgroup".into(),
            }],
        },
    }
}

/// The recorder's one interval summarised, as the engine does at the end of a run.
fn built_result(
    mut rec: loadlab_metrics::Recorder,
    meta: &loadlab_record::RecordMeta,
) -> loadlab_metrics::RunResult {
    use loadlab_metrics::result::StopReason;
    use loadlab_record::{IntervalRecord, RecordEnd, Summarizer};

    let mut summary = Summarizer::new(2);
    summary.add(&IntervalRecord {
        index: 0,
        start_s: 0.0,
        length_s: 1.0,
        warmup: false,
        delta: rec.take_interval(3, 0.1),
        resources: vec![resource_sample(1000)],
    });
    summary.finish(
        meta,
        Some(&RecordEnd {
            stop: StopReason::Completed,
            aborted_by_threshold: None,
            signal: None,
            wall_s: 1.0,
            max_rss_bytes: 1,
            intervals: 1,
            monitor_cpu_percent: Some(0.3),
            host_timer: None,
            steering: Vec::new(),
            driven: None,
            data_use: Vec::new(),
        }),
    )
}

/// A result built the way the engine builds one (recorder → intervals → `Summarizer`), every
/// error kind included, also matches the schema: the hand-built sample cannot drift from the
/// producer.
#[test]
fn recorder_built_result_validates() {
    use loadlab_metrics::ErrorKind;

    let result = built_result(recorded_traffic(), &built_meta());
    assert_eq!(result.errors.len(), ErrorKind::ALL.len());
    assert_eq!(result.steps[0].slowest.len(), 5, "traced requests are kept");
    let phases = result.phases_ms.expect("phases measured");
    assert_eq!(phases.connect.map(|c| c.count), Some(10));
    assert!(phases.waiting.is_some() && result.steps[1].phases_ms.is_some());
    assert!(result.iterations.duration_ms.is_some());
    assert!(
        !result.histograms.waiting.is_empty() && !result.histograms.iteration_duration.is_empty()
    );
    let resources = result.resources.as_ref().expect("sampled");
    assert_eq!(
        resources
            .get("processes.target.cpu_percent")
            .map(|s| s.mean),
        Some(99.0)
    );
    assert!(result
        .verdicts
        .iter()
        .any(|v| v.kind == loadlab_metrics::TargetVerdictKind::TargetCpuBound));
    // The host was busy (it is a finding in the resources), but the generator's timing was
    // not measured as disturbed: a busy host alone never makes a run invalid.
    assert!(!result
        .validity
        .has(loadlab_metrics::InvalidKind::HostContended));
    assert!(resources
        .findings
        .iter()
        .any(|f| f.kind == loadlab_metrics::resources::FindingKind::HostContended));
    assert_eq!(result.requests.delayed_by_stream_limit, 1);
    let grpc = result.steps[0]
        .grpc
        .as_ref()
        .expect("step a made gRPC calls");
    assert_eq!(grpc.status_codes["OK"], 1);
    assert_eq!(grpc.status_codes["UNAVAILABLE"], 1);
    assert_eq!(
        (grpc.messages_received, grpc.first_message_ms.count),
        (3, 1)
    );
    assert!(!result.steps[0].histograms.first_message.is_empty());
    assert!(result.steps[1].ws.is_some() && result.steps[1].grpc.is_none());
    assert_eq!(result.origins.len(), 2);
    assert_eq!(
        result.origins[0].protocol,
        Some(loadlab_metrics::Protocol::H2c)
    );
    assert_eq!(result.origins[0].connections["h2c"], 4);
    assert_eq!(
        result.origins[1].protocol,
        Some(loadlab_metrics::Protocol::Http1)
    );
    let doc = rendered(&result);
    assert_eq!(errors(&validator(), &doc), Vec::<String>::new());

    // And the summary renders every hint.
    let mut out = Vec::new();
    loadlab_report::render_summary(&result, &mut out, loadlab_report::Style::PLAIN).unwrap();
    let text = String::from_utf8(out).unwrap();
    for kind in ErrorKind::ALL {
        assert!(text.contains(kind.hint()), "{kind}");
        assert!(text.contains(&format!("e.g. example {kind}")), "{kind}");
    }
    // And the report's errors table lists every kind (41 with gRPC's), and the protocols.
    let md = loadlab_report::render_markdown(&loadlab_report::run_report(&result, None), "c").text;
    for kind in ErrorKind::ALL {
        assert!(md.contains(&format!("| `{kind}` |")), "{kind}");
    }
    assert!(
        // Step a's requests include one of every other error kind (the stream kinds too).
        md.contains("| `a` | 522 | OK 1, UNAVAILABLE 1 | 2 (40 B) | 3 (90 B) |"),
        "{}",
        md.lines()
            .filter(|l| l.contains("`a`"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `docs/schema/study.v1.json` describes study.json as serde writes it: a study with
/// comparisons, outliers and drift fields, and a sweep with its USL issues.
#[test]
fn studies_validate_against_the_study_schema() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/schema/study.v1.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("a valid schema");
    for (name, (study, _)) in [("study", samples::study()), ("sweep", samples::sweep())] {
        let doc = serde_json::to_value(&study).unwrap();
        assert_eq!(errors(&v, &doc), Vec::<String>::new(), "{name}");
        let back: loadlab_analysis::study::StudyResult = serde_json::from_value(doc).unwrap();
        assert_eq!(back, study, "{name} round-trips");
    }
}
