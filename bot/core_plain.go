package bot

import (
	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// This file answers what free text asks to change: "释放box2", "box2关机了",
// "stopped box1" become a proposed /release, /stop or /resume with the
// buttons Confirm / Edit / Cancel, applied only on Confirm (as a proposed
// /rent is, callback_proposal.go).

// commandTimeLayout is how a proposed command writes its time, in the
// user's zone: a TIME that Parse reads back.
const commandTimeLayout = "2006-01-02 15:04"

// proposeChange checks that the change can apply now (the rental exists,
// is in a state the event fits, the time is after its last event), so a
// refusal comes at once rather than after a tap, then proposes it. The
// change happens when the user said it did, not when they confirm.
func (r talk) proposeChange(c command.ProposedChangeCmd) error {
	if r.inGroup() {
		return r.mark()
	}
	x, err := r.named(c.Name)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return r.answer(r.plain(r.t("change_no_rental", chat.Escape(c.Name))))
	}
	if err != nil {
		return err
	}
	at := r.at(c.At).In(r.loc)
	if err := x.CheckEvent(ledger.Event{Kind: c.Event, At: at}); err != nil {
		return err
	}
	var cmd command.Command
	switch c.Event {
	case ledger.EventStop:
		cmd = command.StopCmd{Name: x.Name, At: at}
	case ledger.EventResume:
		cmd = command.ResumeCmd{Name: x.Name, At: at}
	default:
		cmd = command.ReleaseCmd{Name: x.Name, At: at}
	}
	if err := r.mark(); err != nil {
		return err
	}
	id := r.c.props.add(r.u.UserID, proposalCommand(cmd), []command.Command{cmd}, r.now)
	buttons, err := r.proposalButtons(id)
	if err != nil {
		return err
	}
	out := r.plain(r.t("propose_change", proposalCommand(cmd)))
	out.Buttons = buttons
	return r.send(out)
}

// proposalButtons are Confirm / Edit / Cancel for proposal id.
func (r talk) proposalButtons(id string) ([][]chat.Button, error) {
	var row []chat.Button
	for _, b := range []struct{ act, key string }{{actConfirm, "btn_confirm"}, {actEdit, "btn_edit"}, {actCancel, "btn_cancel"}} {
		d, err := r.sign(b.act, id)
		if err != nil {
			return nil, err
		}
		row = append(row, chat.Button{Text: r.t(b.key), Data: d})
	}
	return [][]chat.Button{row}, nil
}

// proposalCommand writes a proposed command as the command the user could
// send instead.
func proposalCommand(cmd command.Command) string {
	switch c := cmd.(type) {
	case command.RentCmd:
		return rentCommand(c)
	case command.StopCmd:
		return "/stop " + c.Name + " at " + c.At.Format(commandTimeLayout)
	case command.ResumeCmd:
		return "/resume " + c.Name + " at " + c.At.Format(commandTimeLayout)
	case command.ReleaseCmd:
		return "/release " + c.Name + " at " + c.At.Format(commandTimeLayout)
	}
	return "/" + string(cmd.Kind())
}

// perCardLine says how a per-card price became the rental's: "2×A100 at
// $1.64/h each = $3.28/h", in the currency the rental will have.
func (r talk) perCardLine(rent command.RentCmd, each command.PriceSpec) string {
	x, _ := rentals{r.req}.rental(rent)
	return r.t("propose_per_card", chat.Escape(view.GPUText(&x)), view.FormatPrice(each.Price(), x.Currency, r.lang), view.FormatPrice(x.Price, x.Currency, r.lang))
}
