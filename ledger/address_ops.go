package ledger

import (
	"context"

	"quire/words/address"
)

type ExplainAddressArgs struct {
	Address string `json:"address" jsonschema:"an address, such as finance/definitions/workflow/close-the-week/4/steps/do/1/review or org/connections/<id>"`
}

// explainAddress is the operation explain_address (ops.go).
func (l *Ledger) explainAddress(ctx context.Context, a *ExplainAddressArgs) (*address.Explanation, error) {
	ad, err := address.Parse(a.Address)
	if err != nil {
		return nil, err
	}
	ex := ad.Explain()
	ex.Read, ex.Act = servedCalls(ex.Read), servedCalls(ex.Act)
	if ex.Resolve != nil {
		ex.Resolve = &servedCalls([]address.Call{*ex.Resolve})[0]
	}
	return &ex, nil
}

// servedCalls keeps the calls of the spec's table that name a tool this
// server has; one it does not serve (interactions, connections, members,
// licenses, search: what hosted Auto keeps beyond the vault) names no tool
// and says so, rather than sending an agent to a tool it cannot call.
func servedCalls(calls []address.Call) []address.Call {
	for i, c := range calls {
		if c.Tool == "" {
			continue
		}
		if _, ok := table()[c.Tool]; ok {
			continue
		}
		words := c.Tool + " is not served here: this quire keeps the vault, and the spec's table names it for a runtime that has it, such as hosted Auto"
		if c.Note != "" {
			words += " (" + c.Note + ")"
		}
		calls[i] = address.Call{Note: words, NotServed: true}
	}
	return calls
}
