"""The two response shapes of every procedure call (docs/api.md, "Envelopes and errors")."""

from agentapi.errors import ProcedureError

# JSON-RPC's "internal error", which the specification shows in every error body.
JSONRPC_ERROR_CODE = -32603


def success(data) -> dict:
    return {"result": {"data": data}}


def failure(error: ProcedureError, path: str | None) -> dict:
    data = {"code": error.code, "httpStatus": error.http_status}
    if path is not None:
        data["path"] = path
    return {"error": {"message": error.message, "code": JSONRPC_ERROR_CODE, "data": data}}
