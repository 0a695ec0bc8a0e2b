"""The Google Ads version the tools target and the inputs every Ads request module shares.

Kept apart from `google_ads` (the integration) so that `_ads_uploads` builds its requests on the
same path, customer id and query inputs.
"""

from __future__ import annotations

__all__ = ["API_VERSION", "CUSTOMER", "CUSTOMER_ID", "QUERY", "VALIDATE_ONLY"]

API_VERSION = "v26"
"""The Google Ads API version the tools target (versions are sunset about a year after release)."""

CUSTOMER = "/" + API_VERSION + "/customers/{{ input.customerId | remove: '-' }}"
"""The path of the customer a request is about: /v26/customers/<10 digits>."""
CUSTOMER_ID = {
	"type": "string",
	# The path is customers/{customerId}: a resource name given whole would double it.
	"pattern": "^[0-9]{3}-?[0-9]{3}-?[0-9]{4}$",
	"description": "The Google Ads account id (10 digits, dashes allowed: '123-456-7890'; not the resource name 'customers/...'), from listAccessibleCustomers or the Ads UI.",
}
QUERY = {
	"type": "string",
	"description": 'A GAQL query, e.g. "SELECT campaign.id, campaign.name, campaign.status, metrics.clicks, metrics.cost_micros FROM campaign WHERE segments.date DURING LAST_7_DAYS ORDER BY metrics.clicks DESC LIMIT 50". Money is in micros (1,000,000 = 1 unit of the account currency).',
}
VALIDATE_ONLY = {
	"type": "boolean",
	"description": "Only validate the request, change nothing (a dry run).",
}
