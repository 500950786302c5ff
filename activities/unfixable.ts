// Errors that retrying cannot fix. Temporal retries a failed activity for ever by default, so a refusal that will
// come back the same every time (a bad request, a wrong credential, an invalid config) is turned into a
// non-retryable ApplicationFailure that names its cause: the run then fails with that reason at once, or, where
// the workflow can go on without the activity's result, goes on. Everything else (timeouts, 5xx, a service down,
// 404 of a model the trainer lost in a restart, 409, 410) stays retryable.
import { ApplicationFailure, log } from '@temporalio/activity';
import { HttpError } from '../common/http';
import { ConfigError } from '../config/errors';
import { StoreHttpError } from '../store/client';
import { TinkerAuthError } from '../tinker/auth';
import { RequestFailedError, TinkerApiError } from '../tinker/errors';

/** Statuses that mean "this request is wrong" or "you may not": the same request gets the same answer. */
const REFUSALS = new Set([400, 401, 403, 413, 422]);

/** The trainer refused the data of a request (not its credentials): the message, else null. */
export function refusedByTrainer(err: unknown): string | null {
  if (err instanceof RequestFailedError && err.isUserError) return err.message;
  if (err instanceof TinkerApiError && [400, 413, 422].includes(err.status)) return err.message;
  return null;
}

/** A non-retryable failure's type and message for `err`, or null when a retry may help. */
export function unfixableCause(err: unknown): { type: string; message: string } | null {
  if (err instanceof ApplicationFailure) return null; // already decided
  if (err instanceof ConfigError) return { type: 'InvalidRunConfig', message: err.message };
  if (err instanceof TinkerAuthError) return { type: 'TrainerCredentials', message: `the trainer's credential: ${err.message}` };
  if (err instanceof TinkerApiError && (err.status === 401 || err.status === 403)) {
    return { type: 'TrainerCredentials', message: `the trainer refused the credential (set TINKER_API_KEY or TINKER_CREDENTIAL_CMD for the worker): ${err.message}` };
  }
  const refusal = refusedByTrainer(err);
  if (refusal) return { type: 'TrainerRefused', message: refusal };
  if (err instanceof StoreHttpError && REFUSALS.has(err.status)) return { type: 'StoreRefused', message: err.message };
  if (err instanceof HttpError && REFUSALS.has(err.status)) return { type: 'ServiceRefused', message: err.message };
  return null;
}

/** `fn` with its unfixable errors thrown as non-retryable ApplicationFailures (and logged once). */
export function failingUnfixably<A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      const cause = unfixableCause(err);
      if (!cause) throw err;
      log.error(`${name} failed for good (retrying cannot fix it): ${cause.message}`, { type: cause.type });
      throw ApplicationFailure.nonRetryable(`${name}: ${cause.message}`, cause.type, ...(err instanceof ConfigError ? [err.problems] : []));
    }
  };
}
