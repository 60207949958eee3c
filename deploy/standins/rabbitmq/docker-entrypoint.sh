#!/bin/sh
# The parts of the official rabbitmq image's entrypoint that docker-compose.yml relies on.
set -eu
conf=/etc/rabbitmq/rabbitmq.conf
{
    echo "loopback_users.guest = false"
    echo "listeners.tcp.default = 5672"
    if [ -n "${RABBITMQ_DEFAULT_USER:-}" ]; then echo "default_user = $RABBITMQ_DEFAULT_USER"; fi
    if [ -n "${RABBITMQ_DEFAULT_PASS:-}" ]; then echo "default_pass = $RABBITMQ_DEFAULT_PASS"; fi
} > "$conf"
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /etc/rabbitmq
chmod 640 "$conf"
if [ "${1:-}" = rabbitmq-server ]; then
    shift
    exec gosu rabbitmq /usr/lib/rabbitmq/bin/rabbitmq-server "$@"
fi
exec "$@"
