# syntax=docker/dockerfile:1
# netkeep: the API, and (with another command) the collector, from one image. docs/operations.md explains each
# choice; compose.yaml runs the two side by side on one volume.

# Build: all dependencies (esbuild among them), the bundles in dist/, then the dev dependencies dropped.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: the prepare script (the build) needs the source, copied next.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build && npm prune --omit=dev

# Run: plain node on the bundles, as an unprivileged user; everything the service writes is under /data.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    STORAGE_DIR=/data
WORKDIR /app
# The whole app folder: the bundles read their data (drizzle/ migrations, collector/templates/) from the checkout's places.
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# node, not curl or wget: the slim image has neither. Reads PORT as the container sets it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The server process itself, not npm: docker stop's SIGTERM reaches it and the graceful stop runs
# (SHUTDOWN_GRACE_SECONDS, default 25: give `docker stop -t 30`, or stop_grace_period: 30s in compose).
CMD ["node", "dist/main.js"]
