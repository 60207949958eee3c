#!/bin/sh
# Builds the stand-in images into the local Docker daemon under the names docker-compose.yml uses
# (see README.md). Needs debian-local:bookworm first (README.md says how to make it).
set -eu
cd "$(dirname "$0")"
# the host's extra CA certificates (a TLS-inspecting egress proxy here), for pip inside the images
find python/extra-ca -name "*.crt" -delete
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then cp /usr/local/share/ca-certificates/*.crt python/extra-ca/; fi
docker build -t python:3.11-slim-bookworm python
docker build -t postgres:16 postgres
docker build -t rabbitmq:3.13 rabbitmq
docker build -t caddy:2 caddy
docker build -t verity-standin/s3base:local s3base
docker build -t minio/minio:latest minio
docker build -t minio/mc:latest mc
docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}'
