// Errors the store raises, each carrying the HTTP status the server answers with (§4.2, §10 items 4-5).

export class StoreError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
    this.name = new.target.name;
  }
}

/** An unknown rollout/attempt on a mutating call. Lookups answer `200 null` instead of raising this. */
export class NotFoundError extends StoreError {
  constructor(message: string) {
    super(message, 404);
  }
}

/** Invalid pagination/filter arguments or an explicit null for a non-nullable field (Python answers 400). */
export class BadRequestError extends StoreError {
  constructor(message: string) {
    super(message, 400);
  }
}

/** A body that fails schema validation (Python/FastAPI answers 422 with a list of issues). */
export class ValidationError extends StoreError {
  constructor(message: string, readonly issues: { loc: (string | number)[]; msg: string; type: string }[]) {
    super(message, 422);
  }
}

export class PayloadTooLargeError extends StoreError {
  constructor(limit: number) {
    super(`Request body too large: the limit is ${limit} bytes`, 413);
  }
}

/** A write made on the condition that a rollout is still at a revision it has left (span-ops.ts addSpanIfRevision). */
export class StaleRevisionError extends StoreError {
  constructor(message: string, readonly revision: number) {
    super(message, 412);
  }
}
