//! Which HTTP/2 client costs less CPU per request: the `h2` crate driven directly (what the
//! engine does), hyper's HTTP/2 client (`hyper::client::conn::http2`) on top of it, or the
//! purpose-built `h2wire` client (issue 42). All run the same loop: C connections, M tasks
//! per connection each sending GET requests back to back for D seconds, reading and
//! counting each body, on one current-thread runtime — or, for `wire-mt` and `h2-mt`, on a
//! multi-thread runtime with one worker and tasks on `tokio::spawn`, as the engine runs
//! with `--threads 1`. Run by `bench/h2-clients.sh`.
//!
//! `cargo run --release -p loadlab-engine --example h2_clients -- h2|h2-mt|hyper|wire|wire-mt URL C M SECONDS`

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use loadlab_engine::http::h2wire::{H2Wire, HeaderBlock};
use loadlab_engine::http::{h2 as http2, H2Conn};
use loadlab_engine::{RenderedRequest, RequestParts};
use loadlab_metrics::Protocol;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::time::{Duration, Instant};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, client, url, c, m, secs] = &args[..] else {
        eprintln!("usage: h2_clients h2|h2-mt|hyper|wire|wire-mt URL CONNECTIONS STREAMS SECONDS");
        std::process::exit(2);
    };
    let uri: http::Uri = url.parse().expect("a URL");
    let addr = format!("{}:{}", uri.host().unwrap(), uri.port_u16().unwrap_or(80));
    let (c, m): (usize, usize) = (c.parse().unwrap(), m.parse().unwrap());
    let run_for = Duration::from_secs_f64(secs.parse().unwrap());
    let mt = client.ends_with("-mt");
    let runtime = if mt {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    };
    // On the multi-thread runtime the tasks go to its worker; this thread only waits.
    fn spawn<F: Future<Output = ()> + Send + 'static>(
        mt: bool,
        f: F,
    ) -> tokio::task::JoinHandle<()> {
        if mt {
            tokio::spawn(f)
        } else {
            tokio::task::spawn_local(f)
        }
    }
    let done = Arc::new(AtomicU64::new(0));
    let cpu_before = cpu_seconds();
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let end = Instant::now() + run_for;
        let mut tasks = Vec::new();
        for _ in 0..c {
            let tcp = TcpStream::connect(&addr).await.expect("connect");
            tcp.set_nodelay(true).unwrap();
            match client.as_str() {
                "wire" | "wire-mt" => {
                    let (conn, driver) = H2Wire::new(tcp);
                    spawn(mt, driver);
                    let authority = uri.authority().unwrap().as_str();
                    let block = HeaderBlock::new(
                        "GET",
                        "http",
                        authority,
                        uri.path(),
                        [("user-agent", &b"loadlab"[..])],
                    )
                    .unwrap();
                    for _ in 0..m {
                        let (conn, block, done) = (conn.clone(), block.clone(), done.clone());
                        tasks.push(spawn(mt, async move {
                            while Instant::now() < end {
                                let r = conn.exchange(&block, None).await.expect("a response");
                                assert_eq!(r.status, 200);
                                std::hint::black_box(r.body_len);
                                done.fetch_add(1, Ordering::Relaxed);
                            }
                        }));
                    }
                }
                "h2" | "h2-mt" => {
                    let conn = H2Conn::handshake(tcp, Protocol::H2c, true).await.unwrap();
                    for _ in 0..m {
                        let (mut conn, uri, done) = (conn.clone(), uri.clone(), done.clone());
                        tasks.push(spawn(mt, async move {
                            let mut parts = RequestParts::default();
                            parts
                                .write_target(|b| {
                                    b.extend_from_slice(uri.path().as_bytes());
                                    Ok::<(), ()>(())
                                })
                                .unwrap();
                            parts
                                .write_header(b"user-agent", |b| {
                                    b.extend_from_slice(b"loadlab");
                                    Ok::<(), ()>(())
                                })
                                .unwrap();
                            let req = RenderedRequest {
                                step: 0,
                                origin: 0,
                                method: loadlab_scenario::Method::Get,
                                parts: &parts,
                                fixed: true,
                                close: false,
                                max_body: 1 << 20,
                                server: &loadlab_engine::ServerHeader::Off,
                                deadline: end + Duration::from_secs(30),
                                grpc: false,
                            };
                            let authority = uri.authority().unwrap().clone();
                            let head = http2::build(&req, false, &authority).unwrap();
                            while Instant::now() < end {
                                http2::exchange_head(&mut conn, &req, &head, None)
                                    .await
                                    .expect("a response");
                                done.fetch_add(1, Ordering::Relaxed);
                            }
                        }));
                    }
                }
                _ => {
                    let io = hyper_util::rt::TokioIo::new(tcp);
                    let (send, conn) = hyper::client::conn::http2::handshake::<_, _, Empty<Bytes>>(
                        hyper_util::rt::TokioExecutor::new(),
                        io,
                    )
                    .await
                    .unwrap();
                    tokio::task::spawn_local(conn);
                    for _ in 0..m {
                        let (mut send, uri, done) = (send.clone(), uri.clone(), done.clone());
                        tasks.push(tokio::task::spawn_local(async move {
                            while Instant::now() < end {
                                let req = http::Request::get(uri.clone())
                                    .header("user-agent", "loadlab")
                                    .body(Empty::<Bytes>::new())
                                    .unwrap();
                                send.ready().await.unwrap();
                                let resp = send.send_request(req).await.expect("a response");
                                let _ = resp.into_body().collect().await.unwrap();
                                done.fetch_add(1, Ordering::Relaxed);
                            }
                        }));
                    }
                }
            }
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    let cpu = cpu_seconds() - cpu_before;
    let n = done.load(Ordering::Relaxed);
    println!(
        "client={client} connections={c} streams={m} requests={n} cpu_s={cpu:.3} cpu_us_per_req={:.2}",
        cpu / n as f64 * 1e6
    );
}
