//! What each endpoint does, and the order every request goes through: route, read the
//! body (capped), capacity model, token check, endpoint logic. Nothing here panics on
//! client input; every failure becomes a JSON error response.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Either;
use hyper::body::Incoming;
use hyper::header::AUTHORIZATION;
use hyper::{Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::auth::{self, TokenKey};
use crate::capacity::{Capacity, Refusal};
use crate::config::TargetConfig;
use crate::error::TargetError;
use crate::grpc::GrpcState;
use crate::metrics::{self, TargetMetrics};
use crate::request_body::{json_object, read_body};
use crate::response::{self, Body, Resp};
use crate::routes::{self, Route, RouteError};
use crate::signups::{Signup, Signups};
use crate::store::{Access, Counter, Store};

static PONG: &[u8] = br#"{"pong":true}"#;
static HEALTH_OK: &[u8] = br#"{"status":"ok"}"#;

/// Everything one server instance shares between its connections.
#[derive(Debug)]
pub struct AppState {
    pub capacity: Capacity,
    pub tokens: TokenKey,
    pub store: Store,
    /// E-mails that signed up (`POST /api/signups`).
    pub signups: Signups,
    pub metrics: TargetMetrics,
    /// What the WebSocket endpoints did.
    pub ws: Arc<crate::ws::WsCounters>,
    /// The gRPC service's state and counts.
    pub grpc: GrpcState,
    /// The modelled inference server behind the streaming endpoints.
    pub llm: crate::llm::LlmState,
}

impl AppState {
    pub fn new(config: &TargetConfig) -> Result<Self, TargetError> {
        Ok(AppState {
            capacity: Capacity::new(config),
            tokens: TokenKey::new(),
            store: Store::default(),
            signups: Signups::default(),
            metrics: TargetMetrics::default(),
            ws: Arc::default(),
            grpc: GrpcState::new()?,
            llm: crate::llm::LlmState::new(config.llm),
        })
    }
}

/// Entry point for hyper's `service_fn`: gRPC calls go to `grpc`, WebSocket upgrades to
/// `ws`; other requests are counted by route and status, and clients on `/api/*` are told
/// how long the target spent (`Server-Timing: app;dur=...`).
pub async fn handle(
    state: Arc<AppState>,
    req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if crate::grpc::is_grpc(&req) {
        let served = crate::grpc::Served {
            grpc: &state.grpc,
            capacity: &state.capacity,
            metrics: &state.metrics,
        };
        return Ok(crate::grpc::handle(served, req).await);
    }
    if let Some(endpoint) = crate::llm::Endpoint::of(req.uri().path()) {
        return Ok(crate::llm::handle(&state.llm, endpoint, req).await);
    }
    if let Some(endpoint) = crate::ws::Endpoint::of(req.uri().path()) {
        return Ok(crate::ws::accept(state.ws.clone(), endpoint, req).map(Either::Left));
    }
    let start = Instant::now();
    let route = routes::resolve(req.method(), req.uri().path());
    let api = route.is_ok_and(Route::is_api);
    let in_flight = api.then(|| state.metrics.begin());
    let mut resp = dispatch(&state, route, req).await;
    let spent = start.elapsed();
    drop(in_flight);
    if api {
        resp.headers_mut()
            .insert("server-timing", response::server_timing_app(spent));
    }
    state
        .metrics
        .record(metrics::route_index(route), resp.status().as_u16(), spent);
    Ok(resp.map(Either::Left))
}

async fn dispatch(
    state: &AppState,
    route: Result<Route, RouteError>,
    req: Request<Incoming>,
) -> Resp {
    let route = match route {
        Ok(route) => route,
        Err(RouteError::NotFound) => {
            return response::error(StatusCode::NOT_FOUND, "no such endpoint")
        }
        Err(RouteError::MethodNotAllowed(allow)) => return response::method_not_allowed(allow),
    };
    match route {
        Route::Metrics => {
            let mut text = state.metrics.render(state.capacity.waiting());
            state.ws.render(&mut text);
            state.grpc.counters.render(&mut text);
            state.llm.render(&mut text);
            return response::prometheus_text(text);
        }
        Route::Health => return response::raw_json(StatusCode::OK, Bytes::from_static(HEALTH_OK)),
        _ => {}
    }

    // Token check needs only the headers; remember the outcome before the body is taken.
    let user: Option<String> = if route.needs_token() {
        req.headers()
            .get(AUTHORIZATION)
            .and_then(|h| auth::bearer_token(h.as_bytes()))
            .and_then(|t| state.tokens.verify(t))
            .map(str::to_owned)
    } else {
        None
    };

    // POST bodies are read up front (a slow upload does not hold a worker, and the
    // connection stays reusable even when the answer is an error).
    let body = if req.method() == hyper::Method::POST {
        match read_body(req).await {
            Ok(body) => body,
            Err(reject) => return reject.into_response(),
        }
    } else {
        Bytes::new()
    };

    let slot = match state.capacity.serve().await {
        Ok(slot) => slot,
        Err(Refusal::QueueFull) => {
            return response::error(
                StatusCode::SERVICE_UNAVAILABLE,
                "server overloaded: all workers busy and the queue is full",
            )
        }
        Err(Refusal::InjectedError { acquired }) => {
            state.metrics.record_service(acquired.elapsed());
            return response::error(StatusCode::INTERNAL_SERVER_ERROR, "injected error");
        }
    };
    let resp = serve_endpoint(state, route, &body, user);
    state.metrics.record_service(slot.acquired.elapsed());
    resp
}

/// The endpoint's own work, done while holding a worker.
fn serve_endpoint(state: &AppState, route: Route, body: &Bytes, user: Option<String>) -> Resp {
    if route.needs_token() && user.is_none() {
        return response::error(
            StatusCode::UNAUTHORIZED,
            "missing or invalid token (send Authorization: Bearer <token> from /api/auth/signin)",
        );
    }
    let user = user.as_deref().unwrap_or("");

    match route {
        // Health and metrics were answered before the capacity model.
        Route::Health | Route::Ping | Route::Metrics => {
            response::raw_json(StatusCode::OK, Bytes::from_static(PONG))
        }
        Route::Signin => signin(state, body),
        Route::CreateApplication => match json_object(body) {
            Ok(fields) => {
                let created = state.store.create_application(fields, user, body.len());
                response::json(StatusCode::CREATED, &created)
            }
            Err(reject) => reject.into_response(),
        },
        Route::GetApplication(id) => match id.map(|id| state.store.application_json(id, user)) {
            Some(Access::Granted(json)) => response::raw_json(StatusCode::OK, json),
            Some(Access::NotOwner) => not_owner(),
            Some(Access::Missing) | None => no_such_application(),
        },
        Route::SubmitApplication(id) => {
            match id.map(|id| (id, state.store.submit_application(id, user))) {
                Some((id, Access::Granted(()))) => {
                    response::json(StatusCode::OK, &json!({ "id": id, "status": "submitted" }))
                }
                Some((_, Access::NotOwner)) => not_owner(),
                Some((_, Access::Missing)) | None => no_such_application(),
            }
        }
        Route::CreateUser => create_echo(state, body, Counter::User, None),
        Route::Signup => sign_up(state, body),
        Route::CreateTransaction => create_echo(state, body, Counter::Transaction, None),
        Route::CreateReservation => {
            create_echo(state, body, Counter::Reservation, Some("reserved"))
        }
        Route::GetPatient(Some(id)) => response::json(StatusCode::OK, &patient(id)),
        Route::GetPatient(None) => {
            response::error(StatusCode::BAD_REQUEST, "patient id must be a number")
        }
    }
}

fn no_such_application() -> Resp {
    response::error(StatusCode::NOT_FOUND, "no such application")
}

/// An application id of another user: the token is valid, the access is not. A scenario gets
/// this when it shares ids between users or replays an id from a recording.
fn not_owner() -> Resp {
    response::error(
        StatusCode::FORBIDDEN,
        "this application belongs to another user (use the id your own POST /api/applications returned)",
    )
}

#[derive(Deserialize)]
struct SigninRequest {
    username: String,
    password: String,
}

fn signin(state: &AppState, body: &[u8]) -> Resp {
    let req: SigninRequest = match serde_json::from_slice(body) {
        Ok(req) => req,
        Err(e) => {
            return response::error(
                StatusCode::BAD_REQUEST,
                &format!("expected JSON {{\"username\": ..., \"password\": ...}}: {e}"),
            )
        }
    };
    match auth::check_credentials(&req.username, &req.password) {
        Some(role) => response::json(
            StatusCode::OK,
            &json!({
                "token": state.tokens.issue(&req.username),
                "user": req.username,
                "role": role.as_str(),
            }),
        ),
        None => response::error(StatusCode::UNAUTHORIZED, "invalid username or password"),
    }
}

/// Creates a record that is not kept: a fresh id plus an echo of the client's fields.
fn create_echo(state: &AppState, body: &[u8], counter: Counter, status: Option<&str>) -> Resp {
    let mut fields = match json_object(body) {
        Ok(fields) => fields,
        Err(reject) => return reject.into_response(),
    };
    fields.insert("id".into(), Value::from(state.store.next_id(counter)));
    if let Some(status) = status {
        fields.insert("status".into(), Value::from(status));
    }
    response::json(StatusCode::CREATED, &fields)
}

/// A sign-up: `{"email": ...}` answered 201 with the account's id, or 409 when the e-mail
/// signed up before.
fn sign_up(state: &AppState, body: &[u8]) -> Resp {
    let fields = match json_object(body) {
        Ok(fields) => fields,
        Err(reject) => return reject.into_response(),
    };
    let Some(email) = fields.get("email").and_then(Value::as_str) else {
        return response::error(
            StatusCode::BAD_REQUEST,
            "a sign-up needs an `email` (a string): {\"email\": \"user1@example.test\"}",
        );
    };
    match state.signups.sign_up(email) {
        Signup::Created(id) => {
            response::json(StatusCode::CREATED, &json!({ "id": id, "email": email }))
        }
        Signup::Taken => response::error(
            StatusCode::CONFLICT,
            &format!("`{email}` signed up before: each sign-up needs an e-mail of its own (a data set with `pick: unique`, or `split: segments` across generators)"),
        ),
    }
}

/// A synthetic, deterministic patient record.
fn patient(id: u64) -> Value {
    json!({
        "id": id,
        "name": format!("patient {id}"),
        "ward": format!("ward {}", id % 20 + 1),
        "birth_year": 1940 + id % 80,
        "status": "admitted",
    })
}
