package ledger

import (
	"context"

	"quire/ledger/address"
)

type ExplainAddressArgs struct {
	Address string `json:"address" jsonschema:"an address, such as finance/definitions/workflow/close-the-week/4/steps/do/1/review or org/connections/<id>"`
}

func init() {
	// The route is GET /explain?address=…: an address holds slashes, so it
	// is a query argument rather than a path segment.
	register(Op{Name: "explain_address", Scope: "playbook:read", Method: "GET", Path: "/explain", ReadOnly: true, Idempotent: true,
		Description: "Explain an address: what it names, its segments by name, the tool calls that read the thing and act on it with their arguments filled in, and the resolve_comment that ends the work on a comment made on it. Checks the form only, never that the thing exists. Refuses text that is not an address with invalid_input at /address, naming the segment and the rule it breaks."},
		func(ctx context.Context, l *Ledger, a *ExplainAddressArgs) (*address.Explanation, error) {
			ad, err := address.Parse(a.Address)
			if err != nil {
				return nil, err
			}
			ex := ad.Explain()
			return &ex, nil
		})
}
