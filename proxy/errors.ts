// Errors answered in OpenAI's format: {"error": {"message", "type", "param", "code"}}.

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** Extra response headers (e.g. the policy that failed the call). */
  headers: Record<string, string> = {};
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function badRequest(message: string, param: string | null = null, code: string | null = 'invalid_value'): ApiError {
  return new ApiError(400, message, 'invalid_request_error', param, code);
}
