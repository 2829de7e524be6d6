package connsync

import "github.com/gpuledger/gpuledger/chat"

// actMessages are the texts of the stop and reconciliation side that
// reach users: a Reconciliation's Err, shown by the view as what kept the
// platform's side from being read. Key → {English, Chinese}.
var actMessages = chat.Catalog{
	"rec_rejected":     {"the platform rejected the API key; /connect a new one", "平台拒绝了 API 密钥；请用 /connect 换一个新的"},
	"rec_no_client":    {"the stored key could not be opened; /connect it again", "无法读取已保存的密钥；请重新 /connect"},
	"rec_no_api":       {"its API reports neither billing nor a balance", "其 API 既不提供账单也不提供余额"},
	"rec_failed":       {"the platform did not answer: %[1]s", "平台未应答：%[1]s"},
	"rec_few_balances": {"fewer than two balances from its API in this period yet", "本期内来自其 API 的余额记录不足两条"},
	"rec_currencies":   {"its API gave balances in more than one currency", "其 API 给出的余额不止一种货币"},
}
