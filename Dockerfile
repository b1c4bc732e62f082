# syntax=docker/dockerfile:1
#
# siwa-server in a container: built in the official Swift 6.3 image, run on Debian slim with
# only the C libraries it links (OpenSSL 3, SQLite, zlib, libpq).
#
#   docker build -t siwa-server .
#   docker run --rm -p 8080:8080 -v siwa-data:/data \
#     -e SIWA_PUBLIC_URL=https://auth.example.com -e SIWA_TEAM_ID=... siwa-server
#
# Untested here: the machines this project is developed and tested on have no container engine,
# so no `docker build` has been run on this file. What could be checked without one was: the
# HEALTHCHECK command against a running server, and `ldd` of a --static-swift-stdlib build
# (it needs only libc, libstdc++ and libgcc_s, which the slim image has, and the libraries
# installed below), and that this binary serves /healthz.

# ---- build -------------------------------------------------------------------------------
FROM swift:6.3-bookworm AS build

RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends libssl-dev libsqlite3-dev zlib1g-dev libpq-dev \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Dependencies first, in their own layer, so that editing sources does not fetch them again.
# Package.resolved is not committed (git ignores it here); the glob copies it when present.
COPY Package.* ./
RUN swift package resolve

# SwiftPM checks that every target's folder exists, test targets included, so Tests/ comes too.
COPY Sources ./Sources
COPY Tests ./Tests

# A static Swift standard library and Foundation: the runtime image then needs no Swift
# toolchain, only the system's C libraries. Resource bundles are copied too, should a target
# ever declare some (none today).
RUN swift build -c release --static-swift-stdlib --product siwa-server \
    && mkdir -p /staging \
    && cp "$(swift build -c release --show-bin-path)/siwa-server" /staging/ \
    && find "$(swift build -c release --show-bin-path)" -maxdepth 1 -name '*.resources' \
        -exec cp -R {} /staging/ \;

# ---- run ---------------------------------------------------------------------------------
FROM debian:bookworm-slim

RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends libssl3 libsqlite3-0 zlib1g libpq5 ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# A fixed uid so a bind-mounted /data can be chowned to it on the host.
RUN groupadd --system --gid 10001 siwa \
    && useradd --system --uid 10001 --gid siwa --home-dir /app --no-create-home \
        --shell /usr/sbin/nologin siwa \
    && mkdir -p /app /data \
    && chown siwa:siwa /data

COPY --from=build /staging/ /app/
RUN ln -s /app/siwa-server /usr/local/bin/siwa-server

# The working directory is where `Config/siwa.json` is looked for by default: mount a
# configuration at /app/Config/siwa.json, or set everything with SIWA_* variables.
WORKDIR /app

# The database (and the data key file created beside it when SIWA_DATA_KEY is not set) live in
# the volume, so they outlive the container.
ENV SIWA_LISTEN=0.0.0.0:8080 \
    SIWA_DATABASE=/data/siwa.sqlite3
VOLUME ["/data"]
EXPOSE 8080

USER siwa:siwa

# No curl in the image: bash's /dev/tcp sends GET /healthz to the port SIWA_LISTEN names.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${SIWA_LISTEN##*:} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && IFS= read -r -t 4 line <&3 && [[ $line == 'HTTP/1.'?' 200 '* ]]"]

# SIGTERM (docker stop) drains requests in flight for up to 10 s; docker's default grace
# period is 10 s too, so give `docker stop -t 15` some slack if requests can be slow.
ENTRYPOINT ["siwa-server"]
CMD ["serve"]
