import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a Kubernetes API error, or undefined for anything else. */
export function apiStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

export const isNotFound = (err: unknown): boolean => apiStatus(err) === 404;
/** 409: AlreadyExists on create, Conflict (stale resourceVersion) on update. */
export const isConflict = (err: unknown): boolean => apiStatus(err) === 409;
export const isForbidden = (err: unknown): boolean => apiStatus(err) === 403;
export const isTooManyRequests = (err: unknown): boolean => apiStatus(err) === 429;
