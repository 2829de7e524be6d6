package ledger

// Removal is what TeamStore.RemoveMember did with the things of the
// member taken out of a team, so the chat can say it.
type Removal struct {
	// Handed names the rentals handed over (unreleased, owned by the
	// member in the team's ledger), in ID order.
	Handed []string
	// Revoked are those of them whose agent token was valid and was
	// revoked with the removal, in ID order: the member may hold a copy
	// of it (it was in the install line they ran), and with it could
	// report for the team's host and receive the signed orders meant for
	// its agent. The agent on the host stops with it too: /agent NAME
	// gives the new owner a new install line.
	Revoked []RevokedToken
}

// RevokedToken names a rental whose agent token was revoked.
type RevokedToken struct {
	RentalID int64
	Rental   string
}

// RevokedNames returns the names of the rentals in r.Revoked, in order.
func (r Removal) RevokedNames() []string {
	names := make([]string, len(r.Revoked))
	for i, t := range r.Revoked {
		names[i] = t.Rental
	}
	return names
}
