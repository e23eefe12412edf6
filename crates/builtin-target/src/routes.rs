//! The URL table of the target: maps method and path to an endpoint without allocating,
//! and tells 404 (unknown path) apart from 405 (known path, wrong method).

use hyper::Method;

/// An endpoint, with its path parameter already parsed (`None` = not a number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Health,
    Ping,
    Signin,
    CreateApplication,
    GetApplication(Option<u64>),
    SubmitApplication(Option<u64>),
    CreateUser,
    /// A sign-up whose e-mail must be new.
    Signup,
    CreateTransaction,
    CreateReservation,
    GetPatient(Option<u64>),
    /// Prometheus text exposition of the target's own metrics.
    Metrics,
}

impl Route {
    /// Whether the capacity model (workers, queue, service time, errors) applies.
    pub fn is_api(self) -> bool {
        !matches!(self, Route::Health | Route::Metrics)
    }

    /// Whether the endpoint needs `Authorization: Bearer <token>`.
    pub fn needs_token(self) -> bool {
        !matches!(
            self,
            Route::Health | Route::Ping | Route::Signin | Route::Signup | Route::Metrics
        )
    }
}

/// Every endpoint as people call it, for the start-up banner (kept beside `by_segments`,
/// which is the table that serves them).
pub const ENDPOINTS: &[&str] = &[
    "GET /health (outside the capacity model)",
    "GET /metrics (Prometheus)",
    "GET /api/ping",
    "POST /api/auth/signin",
    "POST /api/applications",
    "GET /api/applications/{id}",
    "POST /api/applications/{id}/submit",
    "POST /api/users",
    "POST /api/signups (each e-mail once: 409 when it signed up before)",
    "POST /api/transactions",
    "POST /api/reservations",
    "GET /api/patients/{id}",
    "WebSocket /ws/echo, /ws/subscribe?every_ms=100 (outside the capacity model)",
    "gRPC permits.v1.Permits/Create, Get, Watch and server reflection (HTTP/2)",
    "POST /v1/chat/completions, /v1/completions (OpenAI-compatible, SSE with stream: true; a modelled inference server: --batch)",
    "GET /sse/ticks?rate=10&count=5 (Server-Sent Events at a fixed rate)",
];

/// Why no endpoint matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteError {
    /// No endpoint has this path: 404.
    NotFound,
    /// The path exists for another method (the one given, for the `Allow` header): 405.
    MethodNotAllowed(&'static str),
}

const MAX_SEGMENTS: usize = 4;

/// Finds the endpoint for a request.
pub fn resolve(method: &Method, path: &str) -> Result<Route, RouteError> {
    // Hot paths first, without splitting.
    let (allowed, route) = match path {
        "/api/ping" => (Method::GET, Route::Ping),
        "/health" => (Method::GET, Route::Health),
        _ => by_segments(path)?,
    };
    if *method == allowed {
        Ok(route)
    } else if allowed == Method::GET {
        Err(RouteError::MethodNotAllowed("GET"))
    } else {
        Err(RouteError::MethodNotAllowed("POST"))
    }
}

fn by_segments(path: &str) -> Result<(Method, Route), RouteError> {
    let rest = path.strip_prefix('/').ok_or(RouteError::NotFound)?;
    let mut segs = [""; MAX_SEGMENTS];
    let mut n = 0;
    for seg in rest.split('/') {
        if n == MAX_SEGMENTS {
            return Err(RouteError::NotFound);
        }
        segs[n] = seg;
        n += 1;
    }
    use Method as M;
    use Route as R;
    Ok(match &segs[..n] {
        ["health"] => (M::GET, R::Health),
        ["metrics"] => (M::GET, R::Metrics),
        ["api", "ping"] => (M::GET, R::Ping),
        ["api", "auth", "signin"] => (M::POST, R::Signin),
        ["api", "applications"] => (M::POST, R::CreateApplication),
        ["api", "applications", id] => (M::GET, R::GetApplication(parse_id(id))),
        ["api", "applications", id, "submit"] => (M::POST, R::SubmitApplication(parse_id(id))),
        ["api", "users"] => (M::POST, R::CreateUser),
        ["api", "signups"] => (M::POST, R::Signup),
        ["api", "transactions"] => (M::POST, R::CreateTransaction),
        ["api", "reservations"] => (M::POST, R::CreateReservation),
        ["api", "patients", id] => (M::GET, R::GetPatient(parse_id(id))),
        _ => return Err(RouteError::NotFound),
    })
}

/// A path id: plain decimal digits only (no sign, no spaces).
fn parse_id(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_every_endpoint() {
        let get = Method::GET;
        let post = Method::POST;
        assert_eq!(resolve(&get, "/health"), Ok(Route::Health));
        assert_eq!(resolve(&get, "/api/ping"), Ok(Route::Ping));
        assert_eq!(resolve(&get, "/metrics"), Ok(Route::Metrics));
        assert_eq!(resolve(&post, "/api/auth/signin"), Ok(Route::Signin));
        assert_eq!(
            resolve(&post, "/api/applications"),
            Ok(Route::CreateApplication)
        );
        assert_eq!(
            resolve(&get, "/api/applications/17"),
            Ok(Route::GetApplication(Some(17)))
        );
        assert_eq!(
            resolve(&post, "/api/applications/17/submit"),
            Ok(Route::SubmitApplication(Some(17)))
        );
        assert_eq!(resolve(&post, "/api/users"), Ok(Route::CreateUser));
        assert_eq!(resolve(&post, "/api/signups"), Ok(Route::Signup));
        assert_eq!(
            resolve(&post, "/api/transactions"),
            Ok(Route::CreateTransaction)
        );
        assert_eq!(
            resolve(&post, "/api/reservations"),
            Ok(Route::CreateReservation)
        );
        assert_eq!(
            resolve(&get, "/api/patients/5"),
            Ok(Route::GetPatient(Some(5)))
        );
        assert_eq!(
            resolve(&get, "/api/patients/x5"),
            Ok(Route::GetPatient(None))
        );
        assert_eq!(
            resolve(&get, "/api/patients/+5"),
            Ok(Route::GetPatient(None))
        );
        assert_eq!(
            resolve(&get, "/api/patients/99999999999999999999999"),
            Ok(Route::GetPatient(None))
        );
    }

    #[test]
    fn unknown_and_wrong_method() {
        assert_eq!(resolve(&Method::GET, "/"), Err(RouteError::NotFound));
        assert_eq!(resolve(&Method::GET, "/api"), Err(RouteError::NotFound));
        assert_eq!(
            resolve(&Method::GET, "/a/b/c/d/e/f"),
            Err(RouteError::NotFound)
        );
        assert_eq!(resolve(&Method::GET, "*"), Err(RouteError::NotFound));
        assert_eq!(
            resolve(&Method::POST, "/api/ping"),
            Err(RouteError::MethodNotAllowed("GET"))
        );
        assert_eq!(
            resolve(&Method::GET, "/api/auth/signin"),
            Err(RouteError::MethodNotAllowed("POST"))
        );
        assert_eq!(
            resolve(&Method::DELETE, "/api/applications/1"),
            Err(RouteError::MethodNotAllowed("GET"))
        );
    }
}
