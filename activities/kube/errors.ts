import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a Kubernetes API error, or undefined for anything else. */
export function apiStatus(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

export const isNotFound = (err: unknown): boolean => apiStatus(err) === 404;
export const isConflict = (err: unknown): boolean => apiStatus(err) === 409;
export const isTooManyRequests = (err: unknown): boolean => apiStatus(err) === 429;
export const isAlreadyExists = (err: unknown): boolean => apiStatus(err) === 409;
