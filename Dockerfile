# syntax=docker/dockerfile:1
#
# Portico's production image. Build: `docker build -t portico .`; run: see compose.yaml and
# docs/deployment.md ("Container image"). The build stage bundles src/ into dist/ (esbuild,
# scripts/build.sh); the image holds dist/ and the production dependencies only.
#
# Pin the base by digest in your own pipeline: --build-arg NODE_IMAGE=node:20-bookworm-slim@sha256:…
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- dependencies: production only, from the lock file ------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- build: src/ → dist/ ----------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts ./scripts
COPY src ./src
RUN sh scripts/build.sh

# ---- runtime: no npm in the process tree, not root ------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/var/lib/portico
WORKDIR /app
# Code and dependencies stay owned by root, read-only to the service user.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/dist ./dist
# The only place the service writes (the embedded database, when DATABASE_URL is unset).
RUN mkdir -p /var/lib/portico && chown node:node /var/lib/portico
USER node
EXPOSE 3000
# node:20 slim images have no curl: Node's own fetch, with a deadline.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The direct entry (docs/deployment.md): node receives SIGTERM itself and shuts down gracefully.
CMD ["node", "--enable-source-maps", "dist/main.js"]
