// Errors the Tinker client raises. RequestFailedError carries the server's category: "user" means the
// request itself is wrong and retrying it cannot help (Temporal activities should fail non-retryably).

/** A non-2xx HTTP answer that the retry table does not retry (or that outlasted the retries). */
export class TinkerApiError extends Error {
  override readonly name = 'TinkerApiError';
  constructor(
    readonly status: number,
    readonly path: string,
    readonly body: string,
  ) {
    super(`Tinker ${path} answered HTTP ${status}: ${body.slice(0, 500)}`);
  }

  /** The server said the request is wrong (4xx other than 408/429, and 410: a lost promise, redo the call). */
  get isUserError(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 410 && this.status !== 429;
  }
}

/** A future that completed with {"error", "category"}. */
export class RequestFailedError extends Error {
  override readonly name = 'RequestFailedError';
  constructor(
    message: string,
    readonly category: 'user' | 'server' | 'unknown',
    readonly requestId: string,
  ) {
    super(message);
  }

  get isUserError(): boolean {
    return this.category === 'user';
  }
}

/** A call or future ran past its deadline. */
export class TinkerTimeoutError extends Error {
  override readonly name = 'TinkerTimeoutError';
}
