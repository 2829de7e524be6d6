package view

import "github.com/gpuledger/gpuledger/chat"

// receiptTexts is the receipt's catalog: key → {English, Chinese}.
var receiptTexts = chat.Catalog{
	"rc_head": {
		"%[1]s on %[2]s (%[3]s): %[4]s",
		"%[2]s 上的 %[1]s（%[3]s）：%[4]s"},
	"rc_head_none": {
		"%[1]s on %[2]s (%[3]s): the bench could measure no GPU.",
		"%[2]s 上的 %[1]s（%[3]s）：测速未能测到任何 GPU。"},
	"rc_sep":         {", ", "，"},
	"rc_tensor":      {"tensor %[1]s TFLOPS", "张量 %[1]s TFLOPS"},
	"rc_of_healthy":  {" (%[1]s %% of a healthy %[2]s)", "（健康 %[2]s 的 %[1]s%%）"},
	"rc_fp32":        {"FP32 %[1]s TFLOPS", "FP32 %[1]s TFLOPS"},
	"rc_memory":      {"memory %[1]s", "显存 %[1]s"},
	"rc_pcie":        {"PCIe %[1]s", "PCIe %[1]s"},
	"rc_pcie_of":     {"PCIe %[1]s (of %[2]s)", "PCIe %[1]s（最高 %[2]s）"},
	"rc_power":       {"power %[1]s/%[2]s W", "功耗上限 %[1]s/%[2]s W"},
	"rc_power_one":   {"power %[1]s W", "功耗上限 %[1]s W"},
	"rc_disk":        {"disk %[1]s", "磁盘 %[1]s"},
	"rc_cores":       {"%[1]s cores", "%[1]s 核"},
	"rc_download":    {"download %[1]s", "下载 %[1]s"},
	"rc_price":       {" · %[1]s/h → %[2]s per tensor-TFLOP-hour", " · %[1]s/小时 → 每张量 TFLOP·小时 %[2]s"},
	"rc_price_only":  {" · %[1]s/h", " · %[1]s/小时"},
	"rc_claim":       {"<i>Measured by the agent on the host: its claim.</i>", "<i>由主机上的代理测得：仅为代理的声明。</i>"},
	"rc_skipped":     {"Not measured: %[1]s", "未测：%[1]s"},
	"rc_skip_one":    {"%[1]s (%[2]s)", "%[1]s（%[2]s）"},
	"rc_bounded":     {"Not believed, shown as not measured: %[1]s", "不可信，按未测处理：%[1]s"},
	"rc_btn_release": {"Release now (%[1]s so far)", "立即释放（已花 %[1]s）"},
	"rc_kept":        {"Kept.", "已保留。"},
	"rc_more":        {"…and %[1]s more: /receipt %[2]s", "……还有 %[1]s 项：/receipt %[2]s"},

	// warnings
	"rw_gpu": {"GPU %[1]s: ", "GPU %[1]s："},
	"rw_slow_tensor": {"tensor %[1]s TFLOPS, %[2]s %% of a healthy %[3]s (%[4]s)",
		"张量 %[1]s TFLOPS，只有健康 %[3]s（%[4]s）的 %[2]s%%"},
	"rw_slow_fp32": {"FP32 %[1]s TFLOPS, %[2]s %% of a healthy %[3]s (%[4]s)",
		"FP32 %[1]s TFLOPS，只有健康 %[3]s（%[4]s）的 %[2]s%%"},
	"rw_slow_memory": {"memory %[1]s, %[2]s %% of a healthy %[3]s (%[4]s)",
		"显存带宽 %[1]s，只有健康 %[3]s（%[4]s）的 %[2]s%%"},
	"rw_slow_copy": {"host↔device copies %[1]s, %[2]s %% of what its link should give (%[3]s)",
		"主机↔显卡拷贝 %[1]s，只有该链路应有速度（%[3]s）的 %[2]s%%"},
	"rw_power_cap":   {"power capped at %[1]s W of its default %[2]s W", "功耗上限被压到 %[1]s W（默认 %[2]s W）"},
	"rw_pcie_narrow": {"PCIe link narrowed to x%[1]s of x%[2]s", "PCIe 链路被降到 x%[1]s（最高 x%[2]s）"},
	"rw_pcie_slow":   {"PCIe link at gen %[1]s of %[2]s", "PCIe 链路只跑在第 %[1]s 代（最高第 %[2]s 代）"},
	"rw_clocks_held": {"SM clock held at %[1]s MHz (a healthy card reaches %[2]s MHz)",
		"SM 频率被限制在 %[1]s MHz（健康显卡可达 %[2]s MHz）"},
	"rw_clocks_held_only": {"SM clock held (the card slowed itself down)", "SM 频率被限制（显卡自行降频）"},
	"rw_neighbour":        {"someone else is on the card: %[1]s", "显卡上还有别人：%[1]s"},
	"rw_neighbour_bare":   {"someone else is on the card", "显卡上还有别人"},
	"rw_nb_procs":         {"%[1]s other processes", "%[1]s 个其他进程"},
	"rw_nb_mem":           {"%[1]s MiB in use", "已占用 %[1]s MiB"},
	"rw_nb_util":          {"%[1]s %% busy before the bench", "测速前已忙 %[1]s%%"},
	"rw_ecc_errors":       {"%[1]s uncorrected ECC errors", "%[1]s 个不可纠正 ECC 错误"},
	"rw_retired_pages":    {"%[1]s retired memory pages", "%[1]s 个已退役显存页"},
	"rw_mig":              {"a MIG slice: its figures are the slice's, not compared with a whole card", "MIG 切片：数字是切片的，不与整卡比较"},
	"rw_unknown_card":     {"no reference for this card: figures without ratios", "参考表中没有这张卡：只给数字，不给比例"},
	"rw_other":            {"%[1]s (%[2]s against %[3]s)", "%[1]s（%[2]s，参考 %[3]s）"},
	"rw_because":          {"; likely cause: %[1]s", "；可能原因：%[1]s"},
	"rw_waste": {". You pay %[1]s/h for %[2]s %% of a healthy %[3]s: %[4]s/h of it buys nothing",
		"。你每小时付 %[1]s，只得到健康 %[3]s 的 %[2]s%%：其中 %[4]s/小时 白花了"},

	// the follow-up
	"rc_started": {
		"<b>%[1]s</b> started working at %[2]s: %[3]s before training started (%[4]s).",
		"<b>%[1]s</b> 于 %[2]s 开始工作：开始训练前花了 %[3]s（%[4]s）。"},
	"rc_started_unpriced": {
		"<b>%[1]s</b> started working at %[2]s, %[3]s after it started (UNPRICED).",
		"<b>%[1]s</b> 于 %[2]s 开始工作，距开机 %[3]s（未定价）。"},

	// /receipt
	"rcp_head":           {"<b>Receipt of %[1]s</b> · %[2]s on %[3]s", "<b>%[1]s 的测速收据</b> · %[3]s 上的 %[2]s"},
	"rcp_measured":       {"Measured by the agent at %[1]s (its claim; %[2]s s wall, %[3]s s on the GPUs; %[4]s).", "代理于 %[1]s 测得（代理的声明；耗时 %[2]s 秒，GPU 占用 %[3]s 秒；%[4]s）。"},
	"rcp_driver":         {"driver %[1]s", "驱动 %[1]s"},
	"rcp_gpu":            {"<b>GPU %[1]s</b> %[2]s", "<b>GPU %[1]s</b> %[2]s"},
	"rcp_fig":            {"%[1]s %[2]s", "%[1]s %[2]s"},
	"rcp_healthy":        {" · healthy %[1]s", " · 健康值 %[1]s"},
	"rcp_datasheet":      {" · datasheet %[1]s", " · 规格 %[1]s"},
	"rcp_ratio":          {" · %[1]s %%", " · %[1]s%%"},
	"rcp_low":            {" ⚠", " ⚠"},
	"rcp_facts":          {"%[1]s", "%[1]s"},
	"rcp_clock":          {"SM clock %[1]s MHz", "SM 频率 %[1]s MHz"},
	"rcp_ecc_on":         {"ECC on", "ECC 开"},
	"rcp_ecc_off":        {"ECC off", "ECC 关"},
	"rcp_host":           {"<b>Host</b> %[1]s", "<b>主机</b> %[1]s"},
	"rcp_disk_rw":        {"disk write %[1]s, read %[2]s", "磁盘写 %[1]s，读 %[2]s"},
	"rcp_torch":          {"PyTorch %[1]s beside it: bf16 matmul %[2]s TFLOPS", "同机 PyTorch %[1]s：bf16 矩阵乘 %[2]s TFLOPS"},
	"rcp_price":          {"Price: %[1]s/h → %[2]s per tensor-TFLOP-hour", "价格：%[1]s/小时 → 每张量 TFLOP·小时 %[2]s"},
	"rcp_price_no":       {"Price: %[1]s/h (no tensor figure to divide it by)", "价格：%[1]s/小时（没有张量数字可除）"},
	"rcp_unpriced":       {"Price: UNPRICED (set one: /price %[1]s …)", "价格：未定价（设置：/price %[1]s …）"},
	"rcp_so_far":         {"So far: %[1]s", "至今：%[1]s"},
	"rcp_setup":          {"Setup tax: %[1]s before work started: %[2]s (%[3]s–%[4]s)", "准备成本：开始工作前花了 %[1]s：%[2]s（%[3]s–%[4]s）"},
	"rcp_setup_no":       {"Setup tax: no sustained GPU work seen yet.", "准备成本：尚未见到持续的 GPU 工作。"},
	"rcp_jobs":           {"<b>Jobs</b>", "<b>任务</b>"},
	"rcp_job":            {"%[1]s · %[2]s · %[3]s · %[4]s", "%[1]s · %[2]s · %[3]s · %[4]s"},
	"rcp_job_exit":       {"exit %[1]s", "退出码 %[1]s"},
	"rcp_job_chat":       {"named in the chat", "聊天中命名"},
	"rcp_nolabel":        {"(no label)", "（无标签）"},
	"rcp_unpriced_money": {"UNPRICED", "未定价"},
	"rw_card":            {"card", "显卡"},
	"rcp_money_partial":  {"%[1]s (part of it unpriced)", "%[1]s（有部分未定价）"},
	"rcp_off": {
		"Receipts are off on this server: its store keeps no benches.",
		"本服务器没有开启测速收据：其存储不保存测速结果。"},
	"rcp_no_bench_off": {
		"<b>%[1]s</b> has no receipt: benches are off for you. Turn them on with <code>/settings bench=on</code>; its agent then runs one.",
		"<b>%[1]s</b> 没有测速收据：你关闭了测速。用 <code>/settings bench=on</code> 打开后，代理会测一次。"},
	"rcp_no_bench_agent": {
		"<b>%[1]s</b> has no receipt: no agent reports for it. Install one on the host (<code>/agent %[1]s</code>), or run <code>gpuledger-agent bench</code> there to see the figures.",
		"<b>%[1]s</b> 没有测速收据：没有代理为它上报。在主机上装一个代理（<code>/agent %[1]s</code>），或在主机上运行 <code>gpuledger-agent bench</code> 查看数字。"},
	"rcp_no_bench_released": {
		"<b>%[1]s</b> was released without a receipt: no agent sent a bench for it. A receipt comes from the bench an agent runs in a rental's first minutes.",
		"<b>%[1]s</b> 释放前没有测速收据：没有代理为它上报测速。收据来自代理在租用开始几分钟内做的测速。"},
	"rcp_no_bench_yet": {
		"<b>%[1]s</b> has no receipt yet: its agent has not reported a bench. It runs one when the GPU is not busy; an agent older than the bench, or one started with --no-bench, never does: update it, or run <code>gpuledger-agent bench</code> on the host.",
		"<b>%[1]s</b> 还没有测速收据：它的代理尚未上报测速。GPU 不忙时代理会测一次；旧版代理或带 --no-bench 启动的代理不会测：请更新代理，或在主机上运行 <code>gpuledger-agent bench</code>。"},
}

func rt(lang, key string, args ...any) string { return receiptTexts.Render(lang, key, args...) }

// ReceiptTextsCheck reports what is wrong with the receipt's catalog
// (chat.Catalog.Check), for the tests of the parts that render it.
func ReceiptTextsCheck() []error { return receiptTexts.Check() }
