# ovreduce: the HTTP API (uvicorn) and the `ovreduce` CLI in one image.
#
#   docker build -t ovreduce .
#   docker run -p 8000:8000 -v ovreduce-store:/data ovreduce
#   docker run -p 8000:8000 -e OVREDUCE_ALLOWED_HOSTS=ovreduce.example.com,localhost ovreduce   # and by that name
#   docker run --rm -v "$PWD":/models ovreduce ovreduce check /models/model.xml
#
# Every dependency ships as a binary wheel, so neither stage needs a compiler. Both stages start from
# the same base, so the virtual environment's interpreter links stay valid in the final stage.
#
# The base is a build argument: any Debian-based image with python3 (3.11 or later) and its venv module.
# For builds that give the same image every time, pin it by digest, read from the registry when you adopt it:
#   docker buildx imagetools inspect python:3.11-slim        # or: skopeo inspect docker://python:3.11-slim
#   docker build --build-arg BASE_IMAGE=python:3.11-slim@sha256:<that digest> -t ovreduce .
# (No digest is written here: it is the registry's to say, and a tag's digest moves with every rebuild.)
ARG BASE_IMAGE=python:3.11-slim

# -- build: the project and its dependencies in a virtual environment ---------------------------------
FROM ${BASE_IMAGE} AS build

# Behind a TLS-intercepting proxy, bind-mount the host's CA bundle into the RUN steps and point pip at it:
#   buildah bud / podman build \
#     --volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
#     --build-arg PIP_CERT=/etc/ssl/certs/ca-certificates.crt ...
# Empty by default (pip then uses its own CA list). A mount is never part of a layer and build arguments
# do not reach the final stage, so no CA is baked into the image.
ARG PIP_CERT=""
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python3 -m venv /opt/venv

WORKDIR /src
# .dockerignore lets in only pyproject.toml, constraints.txt, README.md, ovreduce/ and api/. The dependencies are
# installed at the versions the test suite last passed with (constraints.txt), as CI installs them.
COPY . .
RUN /opt/venv/bin/pip install --no-cache-dir -c constraints.txt .

# -- runtime ------------------------------------------------------------------------------------------
FROM ${BASE_IMAGE} AS runtime

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    OVREDUCE_STORE=/data/store \
    OVREDUCE_HOST=0.0.0.0 \
    OVREDUCE_PORT=8000

RUN groupadd --gid 10001 ovreduce \
    && useradd --uid 10001 --gid ovreduce --create-home --home-dir /home/ovreduce \
        --shell /usr/sbin/nologin ovreduce \
    && mkdir -p /data/store \
    && chown -R ovreduce:ovreduce /data

COPY --from=build /opt/venv /opt/venv

# Numeric, so that runtimes enforcing a non-root user (Kubernetes runAsNonRoot) can verify it.
USER 10001:10001
WORKDIR /home/ovreduce
VOLUME ["/data"]
EXPOSE 8000

# slim has no curl; the proxy handler is emptied so that an http_proxy in the environment is not used. The
# port is the server's (OVREDUCE_PORT, set with -e at run time like every other setting).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request as u; r = u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:%s/healthz' % os.environ.get('OVREDUCE_PORT', '8000'), timeout=4); sys.exit(r.status != 200)"]

# ovreduce serve: uvicorn with every setting from OVREDUCE_* variables (host and port included), a deadline
# for request headers (OVREDUCE_HEADER_TIMEOUT_S) so that clients trickling headers are closed, and a cap on
# requests in flight (OVREDUCE_MAX_REQUESTS) that health checks and unfinished headers do not count
# against: uvicorn's --limit-concurrency counted idle and slow connections, and 40 of them made /healthz 503.
CMD ["ovreduce", "serve"]
