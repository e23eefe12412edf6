//! What each endpoint does, and the order every request goes through: route, read the
//! body (capped), capacity model, token check, endpoint logic. Nothing here panics on
//! client input; every failure becomes a JSON error response.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_LENGTH};
use hyper::{Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::auth::{self, TokenKey};
use crate::capacity::{Capacity, Refusal};
use crate::config::TargetConfig;
use crate::error::TargetError;
use crate::grpc::{Body, GrpcState};
use crate::metrics::{self, TargetMetrics};
use crate::response::{self, Resp};
use crate::routes::{self, Route, RouteError};
use crate::signups::{Signup, Signups};
use crate::store::{Access, Counter, Store};

/// Largest request body accepted; larger ones get 413.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

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
        return Ok(crate::grpc::handle(&state, req).await);
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

/// A request the client got wrong; becomes a JSON error response.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct Reject {
    status: StatusCode,
    message: String,
}

impl Reject {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Reject {
            status,
            message: message.into(),
        }
    }

    fn into_response(self) -> Resp {
        response::error(self.status, &self.message)
    }
}

/// Reads a body that must be a JSON object (a streaming endpoint's request); an error
/// answer otherwise.
pub(crate) async fn read_json_body(req: Request<Incoming>) -> Result<Value, Resp> {
    let body = read_body(req).await.map_err(Reject::into_response)?;
    json_object(&body)
        .map(Value::Object)
        .map_err(Reject::into_response)
}

/// Reads the whole body, at most [`MAX_BODY_BYTES`].
async fn read_body(req: Request<Incoming>) -> Result<Bytes, Reject> {
    let too_large = || {
        Reject::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body larger than 1 MiB",
        )
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(_) => Err(Reject::new(
            StatusCode::BAD_REQUEST,
            "could not read the request body",
        )),
    }
}

/// Parses a body that must be a JSON object.
fn json_object(body: &[u8]) -> Result<Map<String, Value>, Reject> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Reject::new(
            StatusCode::BAD_REQUEST,
            "request body must be a JSON object",
        )),
        Err(e) => Err(Reject::new(
            StatusCode::BAD_REQUEST,
            format!("request body is not valid JSON: {e}"),
        )),
    }
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
