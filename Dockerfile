# Verity's image: the web app, `verity worker` and `verity migrate` (docker-compose.yml runs all three).
# Dependencies are baked in at the versions the test suite ran with (requirements.lock); the app
# runs as an unprivileged user; bubblewrap is installed for run_python's sandbox (see the README,
# Deployment, for what the container needs so that bubblewrap can make its namespaces).

FROM python:3.11-slim-bookworm AS wheel
WORKDIR /src
RUN pip install --no-cache-dir hatchling
COPY pyproject.toml README.md ./
COPY app app
COPY analysis_tools analysis_tools
COPY sandbox sandbox
COPY templates templates
COPY static static
RUN pip wheel --no-deps --no-build-isolation --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VERITY_DATA_DIR=/var/lib/verity
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*
# The dependencies first, in their own layer: a code change does not reinstall them.
COPY requirements.lock /tmp/requirements.lock
RUN pip install --no-cache-dir -r /tmp/requirements.lock
COPY --from=wheel /wheels /wheels
RUN pip install --no-cache-dir --no-deps /wheels/verity-*.whl && rm -rf /wheels
RUN useradd --system --create-home --home-dir /home/verity --uid 10001 verity \
    && mkdir -p /var/lib/verity && chown verity:verity /var/lib/verity
USER verity
WORKDIR /home/verity
VOLUME ["/var/lib/verity"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
CMD ["verity", "serve", "--host", "0.0.0.0", "--port", "8000"]
