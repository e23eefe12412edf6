//! cgroup sampling against a directory of fake cgroup files (any machine), and against this
//! process's own cgroup where a v2 hierarchy is mounted.

use super::*;
use std::time::Duration;

/// A fake cgroup hierarchy in a scratch directory, removed when this is dropped.
struct FakeCgroups {
    root: PathBuf,
    _dir: tempfile::TempDir,
}

impl FakeCgroups {
    fn new(tag: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("loadlab-cg-{tag}-"))
            .tempdir()
            .unwrap();
        FakeCgroups {
            root: dir.path().to_path_buf(),
            _dir: dir,
        }
    }

    fn group(&self, rel: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = self.root.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cgroup.controllers"), "cpu memory\n").unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }
}

fn cpu_stat(usage_usec: u64, periods: u64, throttled: u64, throttled_usec: u64) -> String {
    format!("usage_usec {usage_usec}\nuser_usec 1\nsystem_usec 1\nnr_periods {periods}\nnr_throttled {throttled}\nthrottled_usec {throttled_usec}\n")
}

#[test]
fn cpu_throttling_and_memory_of_a_limited_container() {
    let fake = FakeCgroups::new("limited");
    let id = "3f2a9c1b7e4d5a6b";
    let dir = fake.group(
        &format!("system.slice/docker-{id}0000.scope"),
        &[
            ("cpu.stat", &cpu_stat(1_000_000, 100, 0, 0)),
            ("cpu.max", "150000 100000\n"),
            ("memory.current", "104857600\n"),
            ("memory.peak", "209715200\n"),
            ("memory.max", "max\n"),
        ],
    );
    let config = [CgroupWatch {
        name: "db".into(),
        location: CgroupLocation::Container(id[..12].into()),
    }];
    let mut watcher = CgroupWatcher::with_mount(&config, Some(fake.root.clone()));
    let mut out = Collect::default();
    watcher.sample(&mut out);
    let (first, missing, _) = out.take();
    assert!(missing.is_empty(), "{missing:?}");
    assert_eq!(first["cgroups.db.cpu_limit_cores"], 1.5);
    assert_eq!(first["cgroups.db.memory_bytes"], 104857600.0);
    assert_eq!(first["cgroups.db.memory_peak_bytes"], 209715200.0);
    assert!(
        !first.contains_key("cgroups.db.memory_limit_bytes"),
        "max = no limit"
    );
    assert!(
        !first.contains_key("cgroups.db.cpu_percent"),
        "needs two readings"
    );

    std::thread::sleep(Duration::from_millis(200));
    // 0.2 s later: 0.27 s of CPU used (≈135% of a core, 90% of the 1.5-core quota),
    // throttled in 5 of 10 periods for 40 ms.
    std::fs::write(dir.join("cpu.stat"), cpu_stat(1_270_000, 110, 5, 40_000)).unwrap();
    watcher.sample(&mut out);
    let (v, _, _) = out.take();
    let cpu = v["cgroups.db.cpu_percent"];
    assert!((110.0..=136.0).contains(&cpu), "cpu {cpu}");
    let of_limit = v["cgroups.db.cpu_of_limit_percent"];
    assert!((cpu / 1.5 - of_limit).abs() < 1e-9);
    assert_eq!(v["cgroups.db.cpu_throttled_percent"], 50.0);
    assert!(v["cgroups.db.throttled_ms_per_s"] > 150.0);
}

#[test]
fn missing_cgroups_warn_once_and_recover() {
    let fake = FakeCgroups::new("missing");
    let path = fake.root.join("system.slice/mysql.service");
    let config = [
        CgroupWatch {
            name: "db".into(),
            location: CgroupLocation::Path(path.clone()),
        },
        CgroupWatch {
            name: "gone".into(),
            location: CgroupLocation::Container("aaaaaaaaaaaa".into()),
        },
    ];
    let mut watcher = CgroupWatcher::with_mount(&config, Some(fake.root.clone()));
    let mut out = Collect::default();
    watcher.sample(&mut out);
    let (_, missing, warnings) = out.take();
    assert_eq!(missing, vec!["cgroups.db", "cgroups.gone"]);
    assert!(
        warnings[0].message.contains("no cgroup directory"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].message.contains("container aaaaaaaaaaaa"),
        "{warnings:?}"
    );
    watcher.sample(&mut out);
    assert!(out.take().2.is_empty(), "warned once");

    // A v1-style directory is refused with a reason.
    std::fs::create_dir_all(&path).unwrap();
    watcher.sample(&mut out);
    fake.group(
        "system.slice/mysql.service",
        &[("cpu.stat", &cpu_stat(5, 0, 0, 0))],
    );
    watcher.sample(&mut out);
    let (v, missing, _) = out.take();
    assert_eq!(missing.iter().filter(|m| *m == "cgroups.db").count(), 1);
    assert!(v.contains_key("cgroups.db.cpu_limit_cores"));
}

#[test]
fn reads_this_process_cgroup_where_v2_is_mounted() {
    let Some(dir) = own_cgroup().filter(|d| d.join("cpu.stat").exists()) else {
        println!("skipped: no cgroup v2 hierarchy with cpu.stat on this machine");
        return;
    };
    let config = [CgroupWatch {
        name: "self".into(),
        location: CgroupLocation::Path(dir),
    }];
    let mut watcher = CgroupWatcher::new(&config);
    let mut out = Collect::default();
    watcher.sample(&mut out);
    std::thread::sleep(Duration::from_millis(100));
    watcher.sample(&mut out);
    let (v, missing, warnings) = out.take();
    assert!(missing.is_empty(), "{warnings:?}");
    assert!(v["cgroups.self.cpu_percent"] >= 0.0);
    assert!(v["cgroups.self.cpu_limit_cores"] > 0.0);
}
