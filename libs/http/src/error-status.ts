/** The one place where error codes meet HTTP statuses (api-v1 Errors, decisions §3). */
export const ERROR_STATUS: Record<string, number> = {
  invalid_json: 400,
  unauthorized: 401,
  forbidden_plan: 403,
  read_only_key: 403,
  window_expired: 403,
  link_invalid: 403,
  link_expired: 403,
  not_found: 404,
  stale_config_hash: 409,
  quote_not_editable: 409,
  quote_not_sendable: 409,
  quote_not_actionable: 409,
  revision_required: 409,
  already_in_flight: 409,
  conflict: 409,
  session_expired: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_error: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
};

export function statusOf(code: string): number {
  return ERROR_STATUS[code] ?? 500;
}
