# mcpsim over streamable HTTP. Build: docker compose build; run: MCPSIM_TOKEN=... docker compose up
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MCPSIM_CACHE_DIR=/var/cache/mcpsim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY mcpsim ./mcpsim
COPY worlds ./worlds
RUN pip install --no-cache-dir . \
 && mcpsim build retail --scale small \
 && mcpsim build retail --scale default \
 && useradd --system --uid 10001 mcpsim \
 && chown -R mcpsim /var/cache/mcpsim

USER mcpsim
EXPOSE 8000
# Bound to 0.0.0.0, the server accepts only the Host and Origin values listed explicitly
# (MCPSIM_ALLOWED_HOSTS / MCPSIM_ALLOWED_ORIGINS, set in docker-compose.yml); see docs/security.md.
CMD ["mcpsim", "serve", "retail", "--http", "--host", "0.0.0.0", "--port", "8000", "--log-format", "json"]
