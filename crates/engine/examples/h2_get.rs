//! One GET over HTTP/2 (h2c, prior knowledge) through the purpose-built client (`wire`, the
//! engine's default) or the `h2` crate (`h2`): the client h2spec's client suite drives, one
//! run per test case, each test case a server at its own URL (`bench/h2spec-client.sh`).
//! Exits 0 when a response came, 1 when the exchange failed (which a test case may want).
//!
//! `cargo run --release -p loadlab-engine --example h2_get -- wire|h2 URL`

use loadlab_engine::http::h2wire::{H2Wire, HeaderBlock, Keep, KeepHeaders};
use loadlab_engine::http::{h2 as http2, H2Conn};
use loadlab_engine::{RenderedRequest, RequestParts};
use loadlab_metrics::Protocol;
use tokio::net::TcpStream;
use tokio::time::Duration;

/// Longer than any h2spec test case waits for the client (its default timeout is 2 s).
const PATIENCE: Duration = Duration::from_secs(3);
/// How long the connection stays after the exchange, for the frames a test case sends after
/// the response.
const LINGER: Duration = Duration::from_millis(100);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, client, url] = &args[..] else {
        eprintln!("usage: h2_get wire|h2 URL");
        std::process::exit(2);
    };
    let uri: http::Uri = url.parse().expect("a URL");
    let authority = uri.authority().expect("a URL with a host").clone();
    let path = uri.path().to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        let tcp = TcpStream::connect(authority.as_str())
            .await
            .map_err(|e| e.to_string())?;
        tcp.set_nodelay(true).ok();
        let get = async {
            match client.as_str() {
                "wire" => {
                    let (wire, driver) = H2Wire::new(tcp);
                    let driver = tokio::spawn(driver);
                    let head = HeaderBlock::new("GET", "http", authority.as_str(), &path, [])
                        .map_err(|e| e.to_string())?;
                    let keep = Keep {
                        headers: KeepHeaders::All,
                        body: true,
                        ..Keep::default()
                    };
                    let r = wire.exchange_keep(&head, None, keep).await;
                    // Kept a moment, as the engine's pool keeps a connection between
                    // requests (answering PINGs, judging late frames), then closed as the
                    // engine closes one it is done with: GOAWAY, then the socket's end.
                    // Exiting at once would reset it under frames still coming.
                    tokio::time::sleep(LINGER).await;
                    drop(wire);
                    let _ = driver.await;
                    let r = r.map_err(|e| e.to_string())?;
                    Ok(format!("{} with {} body bytes", r.status, r.body_len))
                }
                "h2" => {
                    let mut conn = H2Conn::handshake(tcp, Protocol::H2c, false)
                        .await
                        .map_err(|f| f.message)?;
                    let mut parts = RequestParts::default();
                    parts
                        .write_target(|b| {
                            b.extend_from_slice(path.as_bytes());
                            Ok::<(), ()>(())
                        })
                        .map_err(|_| "a bad path".to_string())?;
                    let req = RenderedRequest {
                        step: 0,
                        origin: 0,
                        method: loadlab_scenario::Method::Get,
                        parts: &parts,
                        fixed: true,
                        close: false,
                        max_body: 1 << 20,
                        server: &loadlab_engine::ServerHeader::Off,
                        deadline: tokio::time::Instant::now() + PATIENCE,
                        grpc: false,
                    };
                    let head = http2::build(&req, false, &authority).map_err(|f| f.message)?;
                    let r = http2::exchange_head(&mut conn, &req, &head, None).await;
                    // As for `wire`; the crate's connection task closes once the handle is
                    // gone.
                    tokio::time::sleep(LINGER).await;
                    drop(conn);
                    tokio::time::sleep(LINGER).await;
                    let r = r.map_err(|f| f.message)?;
                    Ok(format!("{}", r.status))
                }
                other => Err(format!("no client `{other}`: wire or h2")),
            }
        };
        tokio::time::timeout(PATIENCE, get)
            .await
            .map_err(|_| "no answer in time".to_string())?
    });
    match result {
        Ok(said) => println!("{said}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
