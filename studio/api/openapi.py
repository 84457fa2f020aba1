"""The OpenAPI 3.1 description of the environment API, served at /api/v1/openapi.json.

Hand-written, so that it says what the views promise; a test validates it with
openapi-spec-validator and fuzzes the live API against it with schemathesis.
"""

from __future__ import annotations

from typing import Any

API_VERSION = "1.0.0"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    text = {
        400: "Malformed request (bad JSON, a missing or mistyped field)",
        401: "No token, or an unknown or revoked one",
        403: "The token's user is a viewer of this project and cannot change it",
        404: "No such object, or one in a project the user is not a member of",
        409: "The episode is busy (a step is running) or closed",
        413: "The request body is over the size limit",
        422: "The action does not fit the scenario's domain",
        429: "Rate limit reached; see Retry-After",
        502: "The world model failed on this step (retry it)",
        504: "The step did not finish in time",
    }
    return {str(s): _json(_ref("Error"), text[s]) for s in statuses}


_ID_PARAM = {
    "name": "id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
    "description": "The environment (episode) id",
}

_SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            }
        },
    },
    "Scenario": {
        "type": "object",
        "required": ["id", "title", "project", "domain", "task", "max_steps", "model"],
        "properties": {
            "id": {"type": "integer"},
            "title": {"type": "string"},
            "project": {"type": "string", "description": "The project's slug"},
            "domain": {"type": "string"},
            "task": {"type": "string"},
            "max_steps": {"type": "integer"},
            "model": {"type": "string", "description": "Its model name at /v1/chat/completions"},
        },
    },
    "EnvCreate": {
        "type": "object",
        "required": ["scenario"],
        "properties": {
            "scenario": {"type": "integer", "minimum": 1, "description": "A scenario id"},
            "seed": {
                "type": ["integer", "null"],
                "minimum": -(2**31),
                "maximum": 2**31 - 1,
                "description": "Seeds probabilistic perturbations; default the scenario's seed",
            },
        },
    },
    "EnvCreated": {
        "type": "object",
        "required": ["id", "observation", "info"],
        "properties": {
            "id": {"type": "integer"},
            "observation": {"type": "string", "description": "The initial observation"},
            "info": {"type": "object"},
        },
    },
    "StepRequest": {
        "type": "object",
        "required": ["action"],
        "properties": {"action": {"type": "string", "description": "The agent's action"}},
    },
    "StepResult": {
        "type": "object",
        "required": ["observation", "reward", "terminated", "truncated", "info"],
        "properties": {
            "observation": {"type": "string"},
            "reward": {"type": "number"},
            "terminated": {"type": "boolean", "description": "A success criterion ended it"},
            "truncated": {"type": "boolean", "description": "It reached the step limit"},
            "info": {
                "type": "object",
                "description": "Step index, perturbations fired, verifier results, telemetry",
                "properties": {
                    "episode_id": {"type": "integer"},
                    "step": {"type": "integer"},
                    "firings": {"type": "array"},
                    "verifiers": {"type": "array"},
                    "telemetry": {"type": "object"},
                },
            },
        },
    },
    "Env": {
        "type": "object",
        "required": ["id", "status", "steps", "observation", "terminated", "truncated"],
        "properties": {
            "id": {"type": "integer"},
            "scenario": {"type": ["integer", "null"]},
            "project": {"type": "string"},
            "domain": {"type": "string"},
            "seed": {"type": "integer"},
            "status": {"type": "string"},
            "source": {"type": "string"},
            "steps": {"type": "integer"},
            "observation": {"type": "string"},
            "reward": {"type": "number"},
            "terminated": {"type": "boolean"},
            "truncated": {"type": "boolean"},
            "created_at": {"type": "string"},
        },
    },
    "ChatMessage": {
        "type": "object",
        "required": ["role", "content"],
        "properties": {
            "role": {"type": "string", "enum": ["system", "user", "assistant"]},
            "content": {"type": "string"},
        },
    },
    "ChatRequest": {
        "type": "object",
        "required": ["model", "messages"],
        "properties": {
            "model": {"type": "string", "description": "scenario-<id>, from /v1/models"},
            "messages": {"type": "array", "items": _ref("ChatMessage"), "minItems": 1},
            "stream": {"type": "boolean"},
            "user": {
                "type": "string",
                "description": "Names the session; without it the conversation's prefix does",
            },
            "metadata": {"type": "object"},
        },
    },
    "ChatCompletion": {
        "type": "object",
        "required": ["id", "object", "model", "choices"],
        "properties": {
            "id": {"type": "string"},
            "object": {"type": "string"},
            "created": {"type": "integer"},
            "model": {"type": "string"},
            "choices": {"type": "array"},
            "usage": {"type": "object"},
            "world_studio": {"type": "object", "description": "episode, step, reward, flags"},
        },
    },
    "ModelList": {
        "type": "object",
        "required": ["object", "data"],
        "properties": {"object": {"type": "string"}, "data": {"type": "array"}},
    },
}


def openapi_schema(server_url: str = "/") -> dict[str, Any]:
    auth_errors = (401, 429)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "World Studio environment API",
            "version": API_VERSION,
            "description": (
                "Scenarios as live environments for RL trainers (Gymnasium-style reset/step/"
                "close), and an OpenAI-compatible chat-completions drop-in. Authenticate with "
                "`Authorization: Bearer <token>` (make tokens on the studio's API page). "
                'Errors are `{"error": {"code", "message"}}`.'
            ),
        },
        "servers": [{"url": server_url.rstrip("/") or "/"}],
        "security": [{"bearer": []}],
        "paths": {
            "/api/v1/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document",
                    "security": [],
                    "responses": {"200": _json({"type": "object"}, "The OpenAPI document")},
                }
            },
            "/api/v1/scenarios": {
                "get": {
                    "operationId": "listScenarios",
                    "summary": "Scenarios the token's user can see",
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "required": ["scenarios"],
                                "properties": {
                                    "scenarios": {"type": "array", "items": _ref("Scenario")}
                                },
                            },
                            "The scenarios",
                        ),
                        **_errors(*auth_errors),
                    },
                }
            },
            "/api/v1/envs": {
                "post": {
                    "operationId": "createEnv",
                    "summary": "Start an episode of a scenario (reset)",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("EnvCreate")}},
                    },
                    "responses": {
                        "201": _json(_ref("EnvCreated"), "The new environment"),
                        **_errors(400, 403, 404, 413, *auth_errors),
                    },
                }
            },
            "/api/v1/envs/{id}": {
                "get": {
                    "operationId": "getEnv",
                    "summary": "An environment's state and latest observation",
                    "parameters": [_ID_PARAM],
                    "responses": {
                        "200": _json(_ref("Env"), "The environment"),
                        **_errors(404, *auth_errors),
                    },
                }
            },
            "/api/v1/envs/{id}/step": {
                "post": {
                    "operationId": "stepEnv",
                    "summary": "Take one action; waits for the world model's observation",
                    "parameters": [_ID_PARAM],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("StepRequest")}},
                    },
                    "responses": {
                        "200": _json(_ref("StepResult"), "The step's result"),
                        **_errors(400, 403, 404, 409, 413, 422, 502, 504, *auth_errors),
                    },
                }
            },
            "/api/v1/envs/{id}/close": {
                "post": {
                    "operationId": "closeEnv",
                    "summary": "Close the environment (no more steps)",
                    "parameters": [_ID_PARAM],
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "required": ["id", "status"],
                                "properties": {
                                    "id": {"type": "integer"},
                                    "status": {"type": "string"},
                                },
                            },
                            "Closed",
                        ),
                        **_errors(403, 404, 413, *auth_errors),
                    },
                }
            },
            "/v1/models": {
                "get": {
                    "operationId": "listModels",
                    "summary": "The user's scenarios as OpenAI models (scenario-<id>)",
                    "responses": {
                        "200": _json(_ref("ModelList"), "The models"),
                        **_errors(*auth_errors),
                    },
                }
            },
            "/v1/chat/completions": {
                "post": {
                    "operationId": "chatCompletions",
                    "summary": "The world model as an OpenAI-compatible endpoint",
                    "description": (
                        "The last user message is the agent's action; earlier user/assistant "
                        "turns must be the episode so far. Each call is one episode step."
                    ),
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _ref("ChatRequest")}},
                    },
                    "responses": {
                        "200": {
                            "description": "A completion (or an SSE stream when stream is true)",
                            "content": {
                                "application/json": {"schema": _ref("ChatCompletion")},
                                "text/event-stream": {"schema": {"type": "string"}},
                            },
                        },
                        **_errors(400, 403, 404, 409, 413, 422, 502, 504, *auth_errors),
                    },
                }
            },
        },
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
