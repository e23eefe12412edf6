# The loadlab image: one static binary on a distroless base, running as a non-root user.
# Used by the manifests of `loadlab k8s` (docs/distributed.md):
#
#   docker build -t ghcr.io/YOUR-ORG/loadlab:0.1.0 .
#   docker push ghcr.io/YOUR-ORG/loadlab:0.1.0
#   loadlab k8s scenario.yaml --image ghcr.io/YOUR-ORG/loadlab:0.1.0 …
#
# Build stage: Alpine's Rust builds for the musl target, which links statically by default
# (ring's and SQLite's C code included, with musl-dev), so the binary needs no libc at run time.
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin loadlab \
    && cp target/release/loadlab /loadlab \
    && /loadlab --version

# Run stage: distroless "static" has CA certificates (for https:// targets and object
# stores), /etc/passwd with the nonroot user (65532) and nothing else: no shell, no package
# manager. About 2 MiB plus the binary.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /loadlab /usr/local/bin/loadlab
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["/usr/local/bin/loadlab"]
CMD ["--help"]
