"""The one translation catalog: every string people read on the pages and in the reports, in English and
Chinese. Keys are plain for the pages; `tool.` names analysis steps, `suggest.` the suggested questions,
`report.` the labels of the reports, `report_note.` the reports' own warnings and `script.` what
analysis.py prints. tests/test_translations.py checks that no key is defined twice, that every entry has
both languages with the same {placeholders}, and that no other module of the pages or reports keeps its own
translations.
"""

from __future__ import annotations

LANGS = ("en", "zh")

CATALOG: dict[str, dict[str, str]] = {
    # ---- The pages -------------------------------------------------------------------------------
    # navigation and layout
    "app_tagline": {
        "en": "Ask your spreadsheet a question. Every number comes with its evidence.",
        "zh": "向你的表格提问。每个数字都有证据支撑。",
    },
    "nav_home": {"en": "Workspaces", "zh": "工作区"},
    # a question asked while a big upload is still being read in the background (runs.py)
    "files_still_loading": {
        "en": "{files} is still being read, and the question may be about it. Ask again once it is read "
        "(its card then shows the whole file).",
        "zh": "{files} 还在读取中，问题可能与它有关。等它读完（卡片上显示出整个文件）后再问一次。",
    },
    # a run set aside after run_max_attempts starts (app/job_worker.py): its worker died, or the machine failed
    "run_dead_letter": {
        "en": "This analysis was started {attempts} times and each time the server running it failed "
        "(it stopped, or lost its database), so it was set aside rather than tried again. "
        "What it recorded is kept. Ask again; if it happens again, tell whoever runs this Verity.",
        "zh": "这次分析已经启动了 {attempts} 次，每次运行它的服务器都出了故障（进程停止或数据库断开），"
        "因此不再重试，已被搁置。已记录的内容都保留着。请重新提问；如果再次出现，请告诉管理这个 Verity 的人。",
    },
    # the web server could not hand a question to the job queue (run_executor=dramatiq, app/runs.py)
    "run_queue_unavailable": {
        "en": "The question could not be passed on to the servers that answer it (their queue is not "
        "reachable). Try again in a minute; if it keeps happening, tell whoever runs this Verity.",
        "zh": "问题没能交给负责回答的服务器（它们的队列连接不上）。请过一分钟再试；如果一直这样，请告诉管理这个 Verity 的人。",
    },
    "language": {"en": "Language", "zh": "语言"},
    # accounts (multi-user mode)
    "auth_login": {"en": "Sign in", "zh": "登录"},
    "auth_signup": {"en": "Create an account", "zh": "注册账号"},
    "auth_logout": {"en": "Sign out", "zh": "退出登录"},
    "auth_why": {
        "en": "This Verity is shared: your workspaces and files are visible only to you.",
        "zh": "这个 Verity 是多人共用的：你的工作区和文件只有你自己能看到。",
    },
    "auth_name": {"en": "Your name", "zh": "你的名字"},
    "auth_email": {"en": "E-mail address", "zh": "电子邮箱"},
    "auth_password": {"en": "Password", "zh": "密码"},
    "auth_have_account": {"en": "Already have an account? Sign in", "zh": "已有账号？去登录"},
    "auth_no_account": {"en": "No account yet? Create one", "zh": "还没有账号？注册一个"},
    "auth_failed": {"en": "The e-mail address or the password is wrong.", "zh": "邮箱或密码不正确。"},
    "auth_throttled": {
        "en": "Too many failed sign-ins. Wait a few minutes, then try again.",
        "zh": "登录失败次数过多，请等几分钟再试。",
    },
    "auth_signup_throttled": {
        "en": "Too many accounts were made from this address. Wait an hour, then try again.",
        "zh": "从这个地址注册的账号过多，请一小时后再试。",
    },
    "auth_bad_email": {
        "en": "Enter an e-mail address such as name@example.com.",
        "zh": "请输入有效的邮箱地址，例如 name@example.com。",
    },
    "auth_short_password": {"en": "Use a password of at least 8 characters.", "zh": "密码至少需要 8 个字符。"},
    "auth_email_taken": {"en": "An account with this e-mail address already exists.", "zh": "这个邮箱已经注册过了。"},
    "auth_signup_closed": {
        "en": "New accounts are created by the administrator (`verity users add`).",
        "zh": "新账号由管理员创建（`verity users add`）。",
    },
    "auth_account": {"en": "Your account", "zh": "你的账号"},
    "auth_change_password": {"en": "Change password", "zh": "修改密码"},
    "auth_current_password": {"en": "Current password", "zh": "当前密码"},
    "auth_new_password": {"en": "New password (at least 8 characters)", "zh": "新密码（至少 8 个字符）"},
    "auth_password_changed": {
        "en": "Password changed. Other browsers were signed out and every API token was revoked.",
        "zh": "密码已修改，其他浏览器已退出登录，所有 API 令牌已作废。",
    },
    "auth_delete_account": {"en": "Delete my account", "zh": "注销账号"},
    "auth_delete_account_help": {
        "en": "This deletes your account and, for good, every workspace you own: uploaded "
        "files, analyses, reports and notes.",
        "zh": "这会注销你的账号，并永久删除你拥有的所有工作区：上传的文件、分析、报告和参考资料。",
    },
    "auth_delete_account_password": {"en": "Your password, to confirm", "zh": "输入密码以确认"},
    "auth_tokens": {"en": "API tokens", "zh": "API 令牌"},
    "auth_tokens_help": {
        "en": "Scripts use a token instead of your password: send the header "
        "'Authorization: Bearer <token>'. Revoke a token you no longer use.",
        "zh": "脚本用令牌代替密码访问：在请求头中发送 'Authorization: Bearer <令牌>'。不再使用的令牌请撤销。",
    },
    "auth_token_once": {
        "en": "Copy this token now: it is shown only once.",
        "zh": "请立即复制这个令牌：它只显示这一次。",
    },
    "auth_no_tokens": {"en": "No API token yet.", "zh": "还没有 API 令牌。"},
    "auth_token_name": {"en": "What is it for?", "zh": "用途"},
    "auth_token_placeholder": {"en": "e.g. monthly report script", "zh": "例如：月报脚本"},
    "auth_create_token": {"en": "Create a token", "zh": "创建令牌"},
    "auth_revoke": {"en": "Revoke", "zh": "撤销"},
    "auth_last_used": {"en": "last used", "zh": "最近使用"},
    # index
    "workspaces": {"en": "Your workspaces", "zh": "你的工作区"},
    "no_workspaces": {"en": "No workspace yet. Create one to start.", "zh": "还没有工作区，先创建一个吧。"},
    "create_workspace": {"en": "Create a workspace", "zh": "创建工作区"},
    "workspace_name": {"en": "Name", "zh": "名称"},
    "workspace_placeholder": {"en": "e.g. Q3 sales review", "zh": "例如：第三季度销售复盘"},
    "create": {"en": "Create", "zh": "创建"},
    "created": {"en": "Created", "zh": "创建于"},
    "open": {"en": "Open", "zh": "打开"},
    # datasets
    "data": {"en": "Data", "zh": "数据"},
    "no_datasets": {
        "en": "No file yet. Upload a spreadsheet (.xlsx, .xls, .ods, .csv, .tsv).",
        "zh": "还没有文件。请上传表格（.xlsx、.xls、.ods、.csv、.tsv）。",
    },
    "upload": {"en": "Upload", "zh": "上传"},
    "upload_file": {"en": "Add a file", "zh": "添加文件"},
    "choose_file": {"en": "Choose a file", "zh": "选择文件"},
    "no_file_chosen": {"en": "No file chosen", "zh": "未选择文件"},
    "sheet_optional": {"en": "Sheet (optional)", "zh": "工作表（可选）"},
    # file errors by category (CONTRACT.md's categories), shown with the reader's own message, which names
    # sizes, limits and sheets (in both languages: app/ingest/errors.py)
    "file_error_unsupported_format": {
        "en": "Verity cannot read this kind of file. Upload data as .xlsx, .xls, .ods, .csv or .tsv, "
        "and reference notes as .txt, .md, .docx or .pdf.",
        "zh": "无法读取这种文件格式。数据请上传 .xlsx、.xls、.ods、.csv 或 .tsv，参考资料请上传 .txt、.md、.docx 或 .pdf。",
    },
    "file_error_file_not_found": {
        "en": "The file was not found. Check its name and folder, then try again.",
        "zh": "没有找到这个文件。请检查文件名和所在的文件夹后再试。",
    },
    "file_error_corrupt_file": {
        "en": "The file is damaged or incomplete. Open it in Excel, WPS or Word, save a new copy and upload that.",
        "zh": "文件已损坏或不完整。请用 Excel、WPS 或 Word 打开后重新另存一份再上传。",
    },
    "file_error_encrypted_file": {
        "en": "The file is protected with a password. Remove the password in Excel (File → Info → Protect "
        "Workbook), save, and upload again.",
        "zh": "文件设置了打开密码。请在 Excel 中取消密码（文件 → 信息 → 保护工作簿）后另存，再上传。",
    },
    "file_error_empty_file": {
        "en": "The file is empty: there is nothing to read.",
        "zh": "文件是空的，没有可读取的内容。",
    },
    "file_error_too_large": {
        "en": "The file is larger than Verity reads. Delete sheets, rows or columns you do not need, or split "
        "it into several files.",
        "zh": "文件太大，超出了可读取的限制。请删除不需要的工作表、行或列，或拆成几个文件。",
    },
    "file_error_no_table_found": {
        "en": "No table was found in the file. Check that a sheet has a header row with data rows below it.",
        "zh": "文件中没有找到数据表格。请确认工作表里有一行表头和下面的数据行。",
    },
    "file_error_encoding_error": {
        "en": "The text encoding of the file was not recognised. In Excel, save it as “CSV UTF-8 (Comma "
        "delimited)” and upload again.",
        "zh": "无法识别文件的文字编码。请在 Excel 中另存为“CSV UTF-8（逗号分隔）”再上传。",
    },
    # the reader's warnings about a file (app/ingest/warnings_text.py writes them from these templates)
    "ingest_warning.blank_row": {
        "en": "1 blank row inside the table was skipped",
        "zh": "跳过了表格中间的 1 个空行",
    },
    "ingest_warning.blank_rows": {
        "en": "{count} blank rows inside the table were skipped",
        "zh": "跳过了表格中间的 {count} 个空行",
    },
    "ingest_warning.totals_row": {
        "en": "row {row} looks like a totals row ('{label}') and was excluded",
        "zh": "第 {row} 行像是合计行（“{label}”），已排除",
    },
    "ingest_warning.more_totals_rows": {
        "en": "{count} more totals/subtotals rows were excluded",
        "zh": "另有 {count} 个合计/小计行已排除",
    },
    "ingest_warning.averages_row": {
        "en": "row {row} looks like a row of averages ('{label}') and was excluded",
        "zh": "第 {row} 行像是平均值行（“{label}”），已排除",
    },
    "ingest_warning.note_row": {
        "en": "row {row} looks like notes below the table ('{label}') and was excluded",
        "zh": "第 {row} 行像是表格下方的备注（“{label}”），已排除",
    },
    "ingest_warning.note_rows": {
        "en": "rows {first}–{last} look like notes below the table ('{label}') and were excluded",
        "zh": "第 {first}–{last} 行像是表格下方的备注（“{label}”），已排除",
    },
    "ingest_warning.instruction_column": {
        "en": "column name '{column}' reads like an instruction to the AI; it is treated as data only",
        "zh": "列名“{column}”读起来像是给 AI 的指令；它只被当作数据",
    },
    "ingest_warning.instruction_cell": {
        "en": "column '{column}', row {row}: the text '{text}' reads like an instruction to the AI; it is treated "
        "as data only",
        "zh": "“{column}”列第 {row} 行：文字“{text}”读起来像是给 AI 的指令；它只被当作数据",
    },
    "ingest_warning.more_instruction_cells": {
        "en": "{count} more cells read like instructions to the AI",
        "zh": "另有 {count} 个单元格读起来像是给 AI 的指令",
    },
    "ingest_warning.hidden_sheet": {
        "en": "sheet '{sheet}' is hidden in the workbook",
        "zh": "工作表“{sheet}”在工作簿中是隐藏的",
    },
    "ingest_warning.unreadable_sheet": {
        "en": "sheet '{sheet}' could not be read and was skipped",
        "zh": "工作表“{sheet}”无法读取，已跳过",
    },
    "ingest_warning.text_encoding": {
        "en": "the file was read with the {encoding} text encoding",
        "zh": "文件按 {encoding} 文字编码读取",
    },
    # the headline of a file error: the file and what is wrong with it
    "file_error_head_unsupported_format": {
        "en": "{file} is not a kind of file Verity reads",
        "zh": "Verity 不能读取 {file} 这种格式的文件",
    },
    "file_error_head_file_not_found": {"en": "{file} was not found", "zh": "没有找到 {file}"},
    "file_error_head_corrupt_file": {"en": "{file} is damaged or incomplete", "zh": "{file} 已损坏或不完整"},
    "file_error_head_encrypted_file": {"en": "{file} is protected with a password", "zh": "{file} 设置了打开密码"},
    "file_error_head_empty_file": {"en": "{file} is empty", "zh": "{file} 是空的"},
    "file_error_head_too_large": {
        "en": "{file} is more than Verity reads at once",
        "zh": "{file} 超出了一次能读取的限制",
    },
    "file_error_head_no_table_found": {"en": "No table was found in {file}", "zh": "在 {file} 中没有找到数据表格"},
    "file_error_head_encoding_error": {
        "en": "The text encoding of {file} was not recognised",
        "zh": "无法识别 {file} 的文字编码",
    },
    "duplicate_upload": {
        "en": "{file} has exactly the same content as {other}, which is already here: the workspace now "
        'holds the data twice. Remove one copy ("Remove this file…") unless that was intended.',
        "zh": "{file} 与已上传的 {other} 内容完全相同：工作区里现在有两份同样的数据。除非是有意为之，"
        "请删除其中一份（“删除此文件…”）。",
    },
    # the reader's cleaning steps (app/ingest), as the preview's cleaning log shows them
    "cleaning.filled merged cells": {"en": "filled merged cells", "zh": "填充了合并单元格"},
    "cleaning.split estimate and range": {
        "en": "split estimate and range",
        "zh": "把“估计值[下限-上限]”拆成了估计值和上下限两列",
    },
    "cleaning.dropped a row-number column": {"en": "dropped a row-number column", "zh": "删除了行号列"},
    "cleaning.converted Excel date serial numbers to dates": {
        "en": "converted Excel date serial numbers to dates",
        "zh": "把 Excel 日期序号转换成了日期",
    },
    "cleaning.parsed thousands separators": {"en": "parsed thousands separators", "zh": "识别了千位分隔符"},
    "cleaning.removed currency symbols": {"en": "removed currency symbols", "zh": "去掉了货币符号"},
    "cleaning.converted percentages to fractions": {
        "en": "converted percentages to fractions",
        "zh": "把百分数转换成了小数",
    },
    "cleaning.read parentheses as negative numbers": {
        "en": "read parentheses as negative numbers",
        "zh": "把括号中的数读作负数",
    },
    "cleaning.expanded number units": {"en": "expanded number units", "zh": "展开了数字单位（如 万、k）"},
    "cleaning.converted full-width digits": {"en": "converted full-width digits", "zh": "转换了全角数字"},
    "cleaning.parsed dates written as text": {"en": "parsed dates written as text", "zh": "识别了以文字书写的日期"},
    "cleaning.read yes/no words as booleans": {
        "en": "read yes/no words as booleans",
        "zh": "把“是/否”类词语读作布尔值",
    },
    "cleaning.non-numeric values read as missing": {
        "en": "non-numeric values read as missing",
        "zh": "非数字的值按缺失处理",
    },
    "cleaning.values that are not dates read as missing": {
        "en": "values that are not dates read as missing",
        "zh": "不是日期的值按缺失处理",
    },
    "cleaning.rows that repeat an earlier row exactly (kept)": {
        "en": "rows that repeat an earlier row exactly (kept)",
        "zh": "与前面某一行完全相同的行（已保留）",
    },
    "cleaning.excluded a row of averages": {
        "en": "excluded a row of averages",
        "zh": "排除了平均值行（如“平均分”），与合计行一样不计入数据",
    },
    "cleaning.read as missing": {"en": "read '{value}' as missing", "zh": "把“{value}”读作缺失值"},
    "this_file": {"en": "This file", "zh": "这个文件"},
    "upload_failed": {"en": "This file could not be read.", "zh": "无法读取这个文件。"},
    "rows": {"en": "rows", "zh": "行"},
    "columns": {"en": "columns", "zh": "列"},
    "sheet": {"en": "Sheet", "zh": "工作表"},
    "other_sheets": {"en": "Other sheets in this file", "zh": "文件中的其他工作表"},
    "use_sheet": {"en": "Use this sheet", "zh": "使用此工作表"},
    "versions": {"en": "Versions", "zh": "版本"},
    "version_n": {"en": "v{n}", "zh": "第 {n} 版"},
    "current_version": {"en": "current", "zh": "当前"},
    "restore": {"en": "Go back to this version", "zh": "恢复到此版本"},
    "header_row": {"en": "Column names found in row {row}", "zh": "列名位于第 {row} 行"},
    "header_rows": {"en": "Column names found in rows {first}-{last}", "zh": "列名位于第 {first}-{last} 行"},
    "missing": {"en": "missing", "zh": "缺失"},
    "masked": {"en": "Personal data masked", "zh": "已隐去个人信息"},
    "cleaning": {"en": "What was cleaned", "zh": "做了哪些清理"},
    "warnings": {"en": "Warnings", "zh": "注意"},
    "first_rows": {"en": "First rows", "zh": "前几行"},
    "about_rows": {"en": "about {n} rows", "zh": "约 {n} 行"},
    "dataset_loading": {
        "en": "These are the first rows. Still reading the rest of the file… This updates "
        "by itself; a question asked before it is done waits for it.",
        "zh": "这是前几行。仍在读取文件的其余部分…… 读取完成后会自动更新；在此之前提出的问题会等它读完再回答。",
    },
    "dataset_reading": {
        "en": "Reading the file… This updates by itself; a question asked before it is done waits for it.",
        "zh": "正在读取文件…… 读取完成后会自动更新；在此之前提出的问题会等它读完再回答。",
    },
    "read_progress": {"en": "{rows} rows read, {percent}% done.", "zh": "已读取 {rows} 行，完成 {percent}%。"},
    "dataset_failed": {"en": "Reading the whole file failed.", "zh": "读取整个文件失败。"},
    "dataset_dismiss": {"en": "Remove from the list", "zh": "从列表中移除"},
    "delete_ws": {"en": "Delete this workspace…", "zh": "删除此工作区…"},
    "delete_ws_title": {"en": "Delete a workspace", "zh": "删除工作区"},
    "delete_ws_question": {"en": "Delete the workspace “{name}”?", "zh": "要删除工作区“{name}”吗？"},
    "delete_ws_detail": {
        "en": "This deletes, for good, its {files} uploaded file(s) with every version, its {runs} "
        "analyses with their reports, charts and traces, its rules and its reference notes. "
        "Reports you downloaded stay yours.",
        "zh": "这会永久删除其中的 {files} 个上传文件（含所有版本）、{runs} 次分析及其报告、图表和追踪记录、"
        "工作区规则和参考资料。已下载的报告不受影响。",
    },
    "delete_ws_confirm": {"en": "Yes, delete it all", "zh": "确认全部删除"},
    "delete_ws_busy": {
        "en": "An analysis or a file read is running in this workspace; delete it when it has "
        "finished (or stop the analysis).",
        "zh": "此工作区有分析或文件读取正在进行；请等它完成（或停止分析）后再删除。",
    },
    "remove_dataset": {"en": "Remove this file…", "zh": "删除此文件…"},
    "remove_title": {"en": "Remove a file", "zh": "删除文件"},
    "remove_question": {"en": "Remove {file} from this workspace?", "zh": "要从此工作区删除 {file} 吗？"},
    "remove_detail": {
        "en": "This deletes the uploaded file and everything made from it: {names}. Reports already "
        "written keep their copy of the results. This cannot be undone.",
        "zh": "这会删除上传的文件及由它生成的所有表：{names}。已生成的报告保留各自的结果。此操作无法撤销。",
    },
    "remove_confirm": {"en": "Yes, remove it", "zh": "确认删除"},
    "remove_table": {"en": "Remove this table…", "zh": "删除此表…"},
    "remove_table_title": {"en": "Remove a table", "zh": "删除表"},
    "remove_table_question": {
        "en": "Remove the table {name} from this workspace?",
        "zh": "要从此工作区删除表 {name} 吗？",
    },
    "remove_table_detail": {
        "en": "This deletes only this table, which an analysis made: {names}. Your uploaded files "
        "and the other tables stay; reports already written keep their copy of the results. "
        "Asking the question again makes it again.",
        "zh": "这只会删除这张由分析生成的表：{names}。您上传的文件和其他表都会保留；已生成的报告保留各自的结果。"
        "再次提出该问题会重新生成它。",
    },
    "derived_tables": {"en": "Tables made by analyses ({n})", "zh": "分析生成的表（{n}）"},
    "derived_tables_help": {
        "en": "Analyses keep the tables they compute here, so later questions can use them. "
        "Your own files are listed above.",
        "zh": "分析会把算出的表保存在这里，供之后的问题使用。您自己上传的文件列在上方。",
    },
    "derived_origin": {"en": "Made from {source} by the step “{tool}”", "zh": "由 {source} 经“{tool}”步骤生成"},
    "derived_origin_plain": {"en": "Made from {source} by an analysis", "zh": "由分析从 {source} 生成"},
    "derived_question": {"en": "For the question:", "zh": "来自问题："},
    "derived_damaged": {
        "en": "This table can no longer be read. Remove it; asking the question again makes it again.",
        "zh": "这张表已无法读取。请删除它；再次提出该问题会重新生成。",
    },
    "cancel": {"en": "Cancel", "zh": "取消"},
    "remove_busy": {
        "en": "An analysis is running in this workspace; remove the file when it has finished.",
        "zh": "此工作区有分析正在进行，请在完成后再删除文件。",
    },
    "datasets_loading": {
        "en": "Still reading: {files}. A question asked now waits until it is read.",
        "zh": "仍在读取：{files}。现在提问会等它读完再回答。",
    },
    "type_number": {"en": "number", "zh": "数值"},
    "type_integer": {"en": "integer", "zh": "整数"},
    "type_datetime": {"en": "date/time", "zh": "日期时间"},
    "type_category": {"en": "category", "zh": "类别"},
    "type_text": {"en": "text", "zh": "文本"},
    "type_boolean": {"en": "yes/no", "zh": "是/否"},
    "type_identifier": {"en": "identifier", "zh": "编号"},
    # asking
    "ask": {"en": "Ask a question", "zh": "提一个问题"},
    "ask_placeholder": {"en": "e.g. Does revenue differ by region?", "zh": "例如：不同地区的收入有差异吗？"},
    "ask_button": {"en": "Ask", "zh": "提问"},
    "suggested": {"en": "Suggested questions", "zh": "推荐问题"},
    "upload_first": {"en": "Upload a file first, then ask.", "zh": "请先上传文件，再提问。"},
    "earlier_runs": {"en": "Earlier questions", "zh": "之前的问题"},
    # run panel
    "status_queued": {"en": "Waiting to start…", "zh": "等待开始…"},
    "status_running": {"en": "Working…", "zh": "分析中…"},
    "status_waiting": {"en": "Waiting for your answer", "zh": "等待你的回答"},
    "status_done": {"en": "Done", "zh": "完成"},
    "status_failed": {"en": "Failed", "zh": "失败"},
    "status_interrupted": {"en": "Stopped", "zh": "已停止"},
    "elapsed": {"en": "elapsed", "zh": "已用时"},
    # a run or step shorter than a second: "0 s" would read as if it took no time or had not started
    "elapsed_under_second": {"en": "<1 s", "zh": "不到 1 秒"},
    "stop": {"en": "Stop", "zh": "停止"},
    "compact_button": {"en": "Compact conversation", "zh": "压缩对话"},
    "compact_help": {
        "en": "Summarise the earlier conversation to keep the context small; the full text stays on disk.",
        "zh": "总结较早的对话以节省上下文；完整内容保存在磁盘上。",
    },
    "plan": {"en": "Plan", "zh": "计划"},
    "plan_goal": {"en": "Goal", "zh": "目标"},
    "plan_methods": {"en": "Planned methods", "zh": "计划的方法"},
    "check_passed": {"en": "checked", "zh": "已核对"},
    # how the question was read, marked apart from the arithmetic's check (issue 24)
    "reading_named": {"en": "reading: named by the question", "zh": "解读：问题已指明"},
    "reading_assumed": {"en": "reading: assumed", "zh": "解读：系推断"},
    # the reading's chips: each role of the reading changed in one click (issue 24 point 4)
    "reading_chips": {"en": "How the question was read", "zh": "对问题的理解"},
    "reading_role_table": {"en": "Table", "zh": "表格"},
    "reading_role_measure": {"en": "Measure", "zh": "度量"},
    "reading_role_group": {"en": "Groups", "zh": "分组"},
    "reading_role_filter": {"en": "Filter", "zh": "筛选"},
    "reading_role_kind": {"en": "Answer", "zh": "结果"},
    "reading_role_n": {"en": "How many", "zh": "前几名"},
    "reading_kind_total": {"en": "total", "zh": "总和"},
    "reading_kind_top": {"en": "top N", "zh": "前 N 名"},
    "reading_kind_share": {"en": "share", "zh": "占比"},
    "reading_kind_trend": {"en": "trend over time", "zh": "随时间的趋势"},
    "reading_kind_compare": {"en": "compare averages", "zh": "比较平均值"},
    "reading_no_filter": {"en": "no filter", "zh": "不筛选"},
    "reading_how_assumed": {"en": "assumed", "zh": "推断"},
    "reading_how_answer": {"en": "your choice", "zh": "您的选择"},
    "reading_rerun": {"en": "Re-run", "zh": "重新分析"},
    "check_failed": {"en": "does not match its analysis", "zh": "与分析结果不符"},
    "check_partly_verified": {"en": "some numbers not found in its analysis", "zh": "部分数字在分析结果中找不到"},
    "checks_passed": {
        "en": "Every claim was checked against the analyses it cites.",
        "zh": "每条结论都已与其引用的分析核对。",
    },
    "checks_failed": {
        "en": "Some claims do not match the analyses they cite (marked below).",
        "zh": "部分结论与其引用的分析不符（见下方标记）。",
    },
    "checks_partly_verified": {
        "en": "Some numbers could not be found in the analyses they cite (marked below); the rest were checked.",
        "zh": "部分数字在其引用的分析中找不到（见下方标记）；其余都已核对。",
    },
    "steps": {"en": "Steps", "zh": "步骤"},
    "running_tool": {"en": "Running {tool}…", "zh": "正在运行 {tool}…"},
    "no_steps": {"en": "No step yet.", "zh": "还没有步骤。"},
    "answer": {"en": "Answer", "zh": "结论"},
    "evidence": {"en": "Evidence", "zh": "证据"},
    "method": {"en": "Method", "zh": "方法"},
    "sample_size": {"en": "Sample size", "zh": "样本量"},
    "limitations": {"en": "Limitations", "zh": "局限"},
    "numbers": {"en": "Numbers", "zh": "数字"},
    "confidence_high": {"en": "high confidence", "zh": "高可信度"},
    "confidence_medium": {"en": "medium confidence", "zh": "中等可信度"},
    "confidence_low": {"en": "low confidence", "zh": "低可信度"},
    # the answer card's result (app/web/answer_result.py): its table, its chart and "how sure"
    "result_row": {"en": "Item", "zh": "项目"},
    "result_aggregated": {"en": "{value} ({agg})", "zh": "{value}（{agg}）"},
    "result_agg_sum": {"en": "total", "zh": "总和"},
    "result_agg_mean": {"en": "average", "zh": "平均值"},
    "result_agg_median": {"en": "median", "zh": "中位数"},
    "result_agg_count": {"en": "count", "zh": "计数"},
    "result_agg_min": {"en": "lowest", "zh": "最小值"},
    "result_agg_max": {"en": "highest", "zh": "最大值"},
    "result_agg_nunique": {"en": "distinct values", "zh": "不同值个数"},
    "result_agg_std": {"en": "standard deviation", "zh": "标准差"},
    "result_stat_share": {"en": "Share", "zh": "占比"},
    "result_stat_mean": {"en": "Average", "zh": "平均值"},
    "result_stat_median": {"en": "Median", "zh": "中位数"},
    "result_stat_n": {"en": "Rows", "zh": "行数"},
    "result_stat_forecast": {"en": "Forecast", "zh": "预测值"},
    "result_stat_lower": {"en": "Lower bound", "zh": "下限"},
    "result_stat_upper": {"en": "Upper bound", "zh": "上限"},
    "result_stat_value": {"en": "Value", "zh": "数值"},
    "result_rows": {"en": "{n} rows", "zh": "{n} 行数据"},
    "result_how_sure": {"en": "How sure: {what}", "zh": "可信程度：{what}"},
    "result_chart": {"en": "Chart", "zh": "图表"},
    "result_table": {"en": "The result (click a column's name to sort)", "zh": "结果（点击列名排序）"},
    "result_method_numbers": {"en": "Method and raw numbers", "zh": "方法与原始数字"},
    "chart_show_as": {"en": "Show as", "zh": "显示为"},
    "chart_kind_bar": {"en": "Bars", "zh": "条形图"},
    "chart_kind_line": {"en": "Line", "zh": "折线图"},
    "chart_kind_table": {"en": "Table", "zh": "表格"},
    "chart_download_png": {"en": "Download PNG", "zh": "下载 PNG 图片"},
    # an answer that states none of the recorded claims: the card shows the last result, called what it is
    "result_last_recorded": {
        "en": "The answer above states none of the recorded results; the last result the analysis recorded: {claim}",
        "zh": "上面的回答没有引用任何记录在案的结果；以下是分析最后记录的结果：{claim}",
    },
    # a forecast's chart: the known periods, then the forecast (dashed, lighter)
    "chart_actual": {"en": "Actual", "zh": "实际值"},
    "chart_forecast": {"en": "Forecast", "zh": "预测"},
    "sort_ascending": {"en": "sorted from low to high", "zh": "从低到高排序"},
    "sort_descending": {"en": "sorted from high to low", "zh": "从高到低排序"},
    "unverified": {"en": "This number is not backed by recorded evidence.", "zh": "这个数字没有记录在案的证据支持。"},
    "unverified_note": {
        "en": "Numbers marked like this are not backed by evidence.",
        "zh": "这样标记的数字没有证据支持。",
    },
    "open_question": {"en": "The analyst needs your answer", "zh": "需要你的回答"},
    "send_answer": {"en": "Send", "zh": "发送"},
    "downloads": {"en": "Download the report", "zh": "下载报告"},
    "check_numbers": {"en": "Check every number with analysis.py", "zh": "用 analysis.py 核对每个数字"},
    "checking_numbers": {
        "en": "Checking every number with analysis.py… (this page updates when it is done)",
        "zh": "正在用 analysis.py 核对每个数字……（完成后本页会更新）",
    },
    "check_stopped_timeout": {
        "en": "The check of the numbers took too long and was stopped; the report does not say they were reproduced.",
        "zh": "核对数字用时过长，已停止；报告不会声称这些数字已被复现。",
    },
    "check_stopped_memory": {
        "en": "The check of the numbers needed more memory than it may use and was stopped; "
        "the report does not say they were reproduced.",
        "zh": "核对数字所需内存超出上限，已停止；报告不会声称这些数字已被复现。",
    },
    "check_stopped_no_sandbox": {
        "en": "The numbers cannot be checked safely on this server: analysis.py re-runs "
        "the analysis' own Python code, which runs only inside the sandbox, and no "
        "sandbox can run here. The report does not say they were reproduced; you can "
        "download analysis.py and run it on your own computer.",
        "zh": "无法在此服务器上安全地核对数字：analysis.py 会重新运行分析中的 Python 代码，"
        "这些代码只能在沙箱中运行，而这里无法启动沙箱。报告不会声称这些数字已被复现；"
        "你可以下载 analysis.py 在自己的电脑上运行。",
    },
    "check_stopped_busy": {
        "en": "Another answer of this workspace is being checked; one check runs at a time per workspace. "
        "Start this one when it is done.",
        "zh": "本工作区的另一个回答正在核对；每个工作区一次只核对一个。请在它完成后再开始这一个。",
    },
    "check_stopped_error": {
        "en": "analysis.py stopped before it could compare the numbers, so the report does not "
        "say they were reproduced. Download analysis.py and run it to see why.",
        "zh": "analysis.py 在比较数字之前就停止了，因此报告不会声称这些数字已被复现。"
        "可下载 analysis.py 自行运行查看原因。",
    },
    "analysis_script": {
        "en": "re-runs every step on your file and checks each number",
        "zh": "在你的文件上重跑每一步并核对每个数字",
    },
    "view_run": {"en": "View", "zh": "查看"},
    "run_error": {"en": "The analysis did not finish.", "zh": "分析没有完成。"},
    "too_many_runs": {
        "en": "{n} of your analyses are already running or waiting to start. Ask again when one "
        "has finished (or stop one).",
        "zh": "你已有 {n} 个分析正在进行或排队。请等其中一个完成（或停止一个）后再提问。",
    },
    # read-only report links
    "share_link": {"en": "Share a read-only link…", "zh": "分享只读链接…"},
    "share_title": {"en": "Share this report", "zh": "分享这份报告"},
    "share_what": {
        "en": "Anyone who has the link can read this report without signing in: the question, the "
        "answer, the evidence and the charts, with personal data masked as in the report. They "
        "cannot see your files, your other analyses or anything else in the workspace.",
        "zh": "任何拿到链接的人无需登录即可阅读这份报告：问题、结论、证据和图表（个人数据按报告中的方式遮盖）。"
        "他们看不到你的文件、其他分析或工作区中的其他内容。",
    },
    "share_confirm": {"en": "Create the link", "zh": "创建链接"},
    "share_created": {
        "en": "Copy the link now: it stays on this page in this browser for 10 minutes, then only the people "
        "you give it to have it. Revoke it here when it is no longer needed.",
        "zh": "请现在复制链接：它在这个浏览器的本页上保留 10 分钟，之后只有你发给的人才有。不再需要时，可在此撤销。",
    },
    "share_loopback_link": {
        "en": "This link points at this computer (localhost), so only this computer can open it. "
        "To share with others, start Verity with --host 0.0.0.0 and set VERITY_PUBLIC_URL to "
        "the address they use (see the README, Sharing).",
        "zh": "这个链接指向本机（localhost），只有这台电脑能打开。要分享给别人，请用 --host 0.0.0.0 "
        "启动 Verity，并把 VERITY_PUBLIC_URL 设为别人访问的地址（见 README 的“分享”一节）。",
    },
    "share_loopback_server": {
        "en": "Verity listens on this computer only (loopback), so others cannot open the link "
        "unless a proxy forwards to it. Start it with --host 0.0.0.0, or set "
        "VERITY_PUBLIC_URL to the proxy's address.",
        "zh": "Verity 只在本机（回环地址）上监听，除非有代理转发，别人打不开这个链接。请用 --host 0.0.0.0 "
        "启动，或把 VERITY_PUBLIC_URL 设为代理的地址。",
    },
    "skip_to_content": {"en": "Skip to the main content", "zh": "跳到主要内容"},
    "ask_enter_hint": {
        "en": "Enter sends the question; Shift+Enter starts a new line.",
        "zh": "按 Enter 发送问题；按 Shift+Enter 换行。",
    },
    "copy": {"en": "Copy", "zh": "复制"},
    "copied": {"en": "Copied", "zh": "已复制"},
    "share_existing": {"en": "Links to this report", "zh": "这份报告的链接"},
    "share_views": {"en": "views", "zh": "次查看"},
    "share_revoke": {"en": "Revoke", "zh": "撤销"},
    "back_to_run": {"en": "Back to the analysis", "zh": "返回分析"},
    # workspace knowledge
    "knowledge_title": {"en": "Reference notes", "zh": "参考资料"},
    "knowledge_help": {
        "en": "Background the analyst may consult: how your company counts things, what happened "
        "when, a glossary. Only the parts that fit the question are used, as reference: "
        "they never override your rules.",
        "zh": "分析时可参考的背景资料：公司的统计口径、发生过的事件、术语表等。每次只取与问题相关的部分，"
        "仅作参考，不会覆盖你的规则。",
    },
    "knowledge_note_title": {"en": "Title (optional)", "zh": "标题（可选）"},
    "knowledge_note_text": {"en": "Note", "zh": "笔记"},
    "knowledge_file": {"en": "…or a document (.txt, .md, .docx, .pdf)", "zh": "……或上传文档（.txt、.md、.docx、.pdf）"},
    "knowledge_add": {"en": "Add", "zh": "添加"},
    "knowledge_saved": {"en": "Added; it is consulted from the next question.", "zh": "已添加，从下一个问题起参考。"},
    "knowledge_none": {"en": "No reference notes yet.", "zh": "还没有参考资料。"},
    "knowledge_remove": {"en": "Remove", "zh": "删除"},
    "knowledge_chars": {"en": "characters", "zh": "字"},
    # workspace rules file and traces
    "rules_title": {"en": "Workspace rules", "zh": "工作区规则"},
    "rules_help": {
        "en": "Definitions and preferences the analyst follows in every question of this workspace "
        '(e.g. "Revenue excludes returns", "Compare months by daily average").',
        "zh": "本工作区每次提问时分析助手都会遵循的定义和偏好（例如“收入不含退货”“按日均比较月份”）。",
    },
    "rules_save": {"en": "Save rules", "zh": "保存规则"},
    "rules_saved": {"en": "Rules saved; they apply from the next question.", "zh": "规则已保存，从下一个问题起生效。"},
    "view_trace": {"en": "Trace (what the model saw)", "zh": "追踪（模型看到的内容）"},
    "trace": {"en": "Trace", "zh": "追踪"},
    "trace_run": {"en": "Run", "zh": "运行"},
    "trace_help": {
        "en": "Every model call with the exact request it was sent, and every tool call, in order.",
        "zh": "按顺序列出每次模型调用（含发送的完整请求）和每次工具调用。",
    },
    "trace_model_calls": {"en": "model calls", "zh": "次模型调用"},
    "trace_tool_calls": {"en": "tool calls", "zh": "次工具调用"},
    "trace_tokens": {"en": "tokens in/out", "zh": "输入/输出 token"},
    "trace_errors": {"en": "errors", "zh": "个错误"},
    "trace_model_call": {"en": "Model call", "zh": "模型调用"},
    "trace_round": {"en": "round", "zh": "轮次"},
    "trace_http_attempts": {"en": "HTTP attempts", "zh": "次 HTTP 尝试"},
    "trace_messages": {"en": "messages", "zh": "条消息"},
    "trace_tools": {"en": "tools", "zh": "个工具"},
    "trace_request": {"en": "Request sent to the model", "zh": "发送给模型的请求"},
    "trace_response": {"en": "Response", "zh": "响应"},
    "trace_budget_table": {"en": "Context budget", "zh": "上下文预算"},
    "trace_arguments": {"en": "arguments", "zh": "参数"},
    "trace_result": {"en": "result", "zh": "结果"},
    "trace_chars": {"en": "characters", "zh": "字符"},
    # errors
    "error_title": {"en": "Something went wrong", "zh": "出了点问题"},
    "error_not_found": {"en": "We could not find that page.", "zh": "找不到这个页面。"},
    "error_internal": {
        "en": "Verity hit an unexpected problem. Your data is safe; please try again.",
        "zh": "Verity 遇到了意外问题。你的数据是安全的，请重试。",
    },
    "error_unknown_host": {
        "en": "This Verity server does not answer to this name. Open it by the address it "
        "printed at start-up (for example http://127.0.0.1:8000), or ask its administrator "
        "to add the name to VERITY_ALLOWED_HOSTS.",
        "zh": "这个 Verity 服务器不接受以此名称访问。请用它启动时显示的地址打开（例如 http://127.0.0.1:8000），"
        "或请管理员把这个名称加入 VERITY_ALLOWED_HOSTS。",
    },
    "error_bad_request": {"en": "The request could not be understood.", "zh": "无法理解这个请求。"},
    "error_too_large": {"en": "This file is too large to upload.", "zh": "文件太大，无法上传。"},
    "dataset_damaged": {
        "en": "Verity's working copy of this file is damaged, so it is left out of analyses. The file "
        "you uploaded is kept unchanged.",
        "zh": "Verity 为这个文件保存的工作副本已损坏，暂不参与分析；你上传的原始文件完好无损。",
    },
    "dataset_rebuild": {"en": "Rebuild it from the original file", "zh": "用原始文件重新生成"},
    "error_disk_full": {
        "en": "The disk of the Verity server is full, so nothing new could be saved. What was "
        "saved before is safe. Ask the administrator to free some space, then try again.",
        "zh": "Verity 服务器的磁盘已满，新的内容无法保存；之前保存的内容都还在。请让管理员清理出一些空间后再试。",
    },
    "error_database_unavailable": {
        "en": "Verity's database did not answer. Nothing was lost; try again in a moment.",
        "zh": "Verity 的数据库暂时没有响应，没有丢失任何内容，请稍后再试。",
    },
    "error_storage_unavailable": {
        "en": "Verity's file store did not answer, so a file could not be read or kept. Nothing was lost; "
        "try again in a moment. If it goes on, ask the administrator to check the object store.",
        "zh": "Verity 的文件存储暂时没有响应，文件无法读取或保存，没有丢失任何内容。请稍后再试；如果一直这样，请让管理员检查对象存储。",
    },
    "error_bad_value": {
        "en": "The request contains a value that cannot be stored (a character or a number out of "
        "range). Check what you entered and try again.",
        "zh": "请求中有无法保存的内容（特殊字符或超出范围的数字），请检查输入后再试。",
    },
    "error_cross_site": {
        "en": "This form was sent from another site, so Verity refused it. Nothing was changed. "
        "Open Verity's own page and try again.",
        "zh": "这个表单来自其他网站，Verity 已拒绝，没有任何改动。请在 Verity 自己的页面上重试。",
    },
    "back_home": {"en": "Back to your workspaces", "zh": "返回工作区"},
    # ---- What each analysis step is called on the page: a non-expert reads "Comparing groups", not compare_groups ---
    "tool.wait_for_files": {"en": "Waiting for a file still being read", "zh": "等待仍在读取的文件"},
    "tool.list_datasets": {"en": "Listing the data", "zh": "列出数据"},
    "tool.preview_data": {"en": "Looking at the first rows", "zh": "查看前几行"},
    "tool.profile_dataset": {"en": "Profiling the data", "zh": "概览数据"},
    "tool.value_counts": {"en": "Counting values", "zh": "统计取值"},
    "tool.describe_columns": {"en": "Describing the numbers", "zh": "描述数值"},
    "tool.compare_two_groups": {"en": "Comparing two groups", "zh": "比较两组"},
    "tool.compare_groups": {"en": "Comparing groups", "zh": "比较多组"},
    "tool.correlation_analysis": {"en": "Checking relationships", "zh": "检查相关关系"},
    "tool.linear_regression": {"en": "Fitting a regression", "zh": "回归分析"},
    "tool.plot_histogram": {"en": "Drawing a histogram", "zh": "绘制直方图"},
    "tool.plot_bar": {"en": "Drawing a bar chart", "zh": "绘制柱状图"},
    "tool.plot_scatter": {"en": "Drawing a scatter plot", "zh": "绘制散点图"},
    "tool.record_evidence": {"en": "Recording evidence", "zh": "记录证据"},
    "tool.anomaly_detection": {"en": "Looking for unusual values", "zh": "查找异常值"},
    "tool.chi_square_test": {"en": "Testing an association (chi-square)", "zh": "检验关联（卡方检验）"},
    "tool.clean_data": {"en": "Cleaning the data", "zh": "清洗数据"},
    "tool.cluster_segments": {"en": "Finding segments", "zh": "划分群组"},
    "tool.cohort_retention": {"en": "Measuring retention by cohort", "zh": "按批次计算留存"},
    "tool.compare_periods": {"en": "Comparing periods", "zh": "比较不同时期"},
    "tool.confidence_interval": {"en": "Computing a confidence interval", "zh": "计算置信区间"},
    "tool.contribution_decomposition": {"en": "Breaking a change into its parts", "zh": "分解变化的来源"},
    "tool.convert_types": {"en": "Converting column types", "zh": "转换列类型"},
    "tool.curve_fit": {"en": "Fitting a curve", "zh": "拟合曲线"},
    "tool.derive_column": {"en": "Computing a new column", "zh": "计算新列"},
    "tool.detect_data_quality": {"en": "Checking data quality", "zh": "检查数据质量"},
    "tool.feature_importance": {"en": "Ranking what matters most", "zh": "评估各因素的重要性"},
    "tool.filter_rows": {"en": "Selecting rows", "zh": "筛选行"},
    "tool.forecast": {"en": "Forecasting", "zh": "预测"},
    "tool.funnel_analysis": {"en": "Analysing a funnel", "zh": "漏斗分析"},
    "tool.group_aggregate": {"en": "Summarising by group", "zh": "分组汇总"},
    "tool.logistic_regression": {"en": "Fitting a logistic regression", "zh": "逻辑回归"},
    "tool.merge_datasets": {"en": "Joining tables", "zh": "合并表格"},
    "tool.normality_test": {"en": "Checking the distribution's shape", "zh": "检验分布形态"},
    "tool.outlier_detection": {"en": "Finding outliers", "zh": "查找离群值"},
    "tool.paired_test": {"en": "Comparing paired measurements", "zh": "比较配对数据"},
    "tool.pca_analysis": {"en": "Reducing dimensions (PCA)", "zh": "降维分析（主成分）"},
    "tool.pivot_table": {"en": "Building a pivot table", "zh": "制作数据透视表"},
    "tool.plot_box": {"en": "Drawing a box plot", "zh": "绘制箱线图"},
    "tool.plot_heatmap": {"en": "Drawing a heat map", "zh": "绘制热力图"},
    "tool.plot_line": {"en": "Drawing a line chart", "zh": "绘制折线图"},
    "tool.plot_pie": {"en": "Drawing a pie chart", "zh": "绘制饼图"},
    "tool.proportion_test": {"en": "Comparing proportions", "zh": "比较比例"},
    "tool.rank_values": {"en": "Ranking values", "zh": "排序"},
    "tool.seasonal_decompose": {"en": "Separating trend and season", "zh": "分解趋势与季节性"},
    "tool.time_series_trend": {"en": "Measuring the trend over time", "zh": "分析时间趋势"},
    "tool.train_classifier": {"en": "Training a classifier", "zh": "训练分类模型"},
    "tool.train_regression_model": {"en": "Training a prediction model", "zh": "训练预测模型"},
    "tool.two_way_anova": {"en": "Comparing groups on two factors", "zh": "双因素方差分析"},
    "tool.run_python": {"en": "Running a custom calculation", "zh": "运行自定义计算"},
    "tool.tool_search": {"en": "Looking for the right analysis", "zh": "查找合适的分析方法"},
    "tool.read_tool_output": {"en": "Re-reading an earlier result", "zh": "查看之前的结果"},
    "tool.compact_context": {"en": "Summarising the conversation", "zh": "压缩对话"},
    "tool.ask_user_question": {"en": "Asking you a question", "zh": "向你提问"},
    "tool.record_analysis_plan": {"en": "Writing down the plan", "zh": "记录分析计划"},
    "tool.task_create": {"en": "Planning a step", "zh": "计划一个步骤"},
    "tool.task_update": {"en": "Updating the plan", "zh": "更新计划"},
    "tool.task_get": {"en": "Reading the plan", "zh": "查看计划"},
    "tool.task_list": {"en": "Reading the plan", "zh": "查看计划"},
    # ---- Suggested questions made from the columns ({a}, {b}: column names) ----------------------
    "suggest.num_by_cat": {"en": "Does {a} differ by {b}?", "zh": "{a}在不同{b}之间有差异吗？"},
    "suggest.num_over_time": {"en": "How does {a} change over time?", "zh": "{a}随时间如何变化？"},
    "suggest.num_num": {"en": "Is {a} related to {b}?", "zh": "{a}和{b}有关系吗？"},
    "suggest.cat_cat": {"en": "Is {a} associated with {b}?", "zh": "{a}和{b}之间有关联吗？"},
    "suggest.num_dist": {"en": "What does the distribution of {a} look like?", "zh": "{a}的分布是怎样的？"},
    "suggest.overview": {"en": "Give me an overview of this data.", "zh": "概括一下这份数据。"},
    # a suggestion whose columns more than one file has names its file ({question} without its "?")
    "suggest.in_dataset": {"en": "{question} in {name}?", "zh": "在{name}中，{question}？"},
    # ---- The reports (HTML, PDF, Word, Markdown) -------------------------------------------------
    "report.title": {"en": "Analysis report", "zh": "分析报告"},
    "report.question": {"en": "Question", "zh": "问题"},
    "report.answer": {"en": "Conclusions", "zh": "结论"},
    "report.evidence": {"en": "Evidence", "zh": "证据"},
    "report.evidence_intro": {
        "en": "Each conclusion and the analysis that backs it.",
        "zh": "每条结论及支持它的分析结果。",
    },
    "report.no_evidence": {"en": "No evidence was recorded for this answer.", "zh": "这个回答没有记录任何证据。"},
    "report.confidence": {"en": "Confidence", "zh": "可信度"},
    "report.reading_named": {"en": "reading: named by the question", "zh": "解读：问题已指明"},
    "report.reading_assumed": {"en": "reading: assumed", "zh": "解读：系推断"},
    "report.high": {"en": "high", "zh": "高"},
    "report.medium": {"en": "medium", "zh": "中"},
    "report.low": {"en": "low", "zh": "低"},
    "report.method": {"en": "Method", "zh": "方法"},
    "report.result": {"en": "Result", "zh": "结果"},
    "report.metrics": {"en": "Key numbers", "zh": "关键数字"},
    "report.metric": {"en": "Measure", "zh": "指标"},
    "report.value": {"en": "Value", "zh": "数值"},
    "report.sample_size": {"en": "Sample size", "zh": "样本量"},
    "report.limitations": {"en": "Limitations", "zh": "局限性"},
    "report.all_limitations": {"en": "Limitations of this analysis", "zh": "本次分析的局限性"},
    "report.based_on": {"en": "Based on tool calls", "zh": "依据的工具调用"},
    "report.figures": {"en": "Charts", "zh": "图表"},
    "report.figure": {"en": "Figure", "zh": "图"},
    "report.supports": {"en": "Supports", "zh": "支持"},
    "report.see_figure": {"en": "See", "zh": "见"},
    "report.from_call": {"en": "made by", "zh": "来自"},
    "report.how": {"en": "How this was analysed", "zh": "分析过程"},
    "report.methods_used": {"en": "Methods used", "zh": "使用的方法"},
    "report.tools_used": {"en": "Tools used", "zh": "使用的工具"},
    "report.plan": {"en": "Plan", "zh": "分析计划"},
    "report.no_plan": {"en": "No plan was recorded.", "zh": "没有记录分析计划。"},
    "report.task": {"en": "Step", "zh": "步骤"},
    "report.status": {"en": "Status", "zh": "状态"},
    "report.pending": {"en": "pending", "zh": "待处理"},
    "report.in_progress": {"en": "in progress", "zh": "进行中"},
    "report.completed": {"en": "completed", "zh": "已完成"},
    "report.deleted": {"en": "deleted", "zh": "已删除"},
    "report.completed_by_evidence": {"en": "by evidence", "zh": "由证据完成"},
    "report.completed_by_model": {"en": "by the analyst", "zh": "由分析员标记"},
    "report.tool_calls": {"en": "Tool calls", "zh": "工具调用"},
    "report.tool": {"en": "Tool", "zh": "工具"},
    "report.arguments": {"en": "Arguments", "zh": "参数"},
    "report.ok": {"en": "ok", "zh": "成功"},
    "report.failed": {"en": "failed", "zh": "失败"},
    "report.duration": {"en": "Time (ms)", "zh": "耗时（毫秒）"},
    "report.id": {"en": "Id", "zh": "编号"},
    "report.datasets": {"en": "Data", "zh": "数据"},
    "report.file": {"en": "File", "zh": "文件"},
    "report.sheet": {"en": "Sheet", "zh": "工作表"},
    "report.rows": {"en": "Rows", "zh": "行数"},
    "report.rows_unit": {"en": "rows", "zh": "行"},
    "report.columns": {"en": "Columns", "zh": "列"},
    "report.columns_unit": {"en": "columns", "zh": "列"},
    "report.unverified_title": {"en": "Numbers to double-check", "zh": "需要核实的数字"},
    "report.unverified_text": {
        "en": "These numbers in the conclusions were not found in any recorded analysis result. "
        "Treat them with caution.",
        "zh": "结论中的以下数字没有在任何分析结果中找到，请谨慎对待。",
    },
    "report.warnings": {"en": "Warnings", "zh": "注意事项"},
    "report.model": {"en": "Model", "zh": "模型"},
    "report.builtin": {"en": "built-in analyst", "zh": "内置分析员"},
    "report.generated": {"en": "Generated", "zh": "生成时间"},
    "report.run": {"en": "Run", "zh": "运行编号"},
    "report.analysis_plan": {"en": "Analysis plan", "zh": "分析计划"},
    "report.guidance": {"en": "What the analysis was told", "zh": "分析所依据的规则与资料"},
    "report.guidance_note": {
        "en": "Besides the data, the analysis followed these rules and definitions and consulted these "
        "notes and earlier findings (notes and earlier findings are reference only).",
        "zh": "除数据外，分析遵循了以下规则和定义，并参考了以下资料和以往结论（资料和以往结论仅作参考）。",
    },
    "report.guidance_rule": {"en": "Workspace rule", "zh": "工作区规则"},
    "report.guidance_definition": {"en": "Confirmed by you", "zh": "你确认的定义"},
    "report.guidance_knowledge": {"en": "Reference note", "zh": "参考资料"},
    "report.guidance_memory": {"en": "Earlier finding", "zh": "以往结论"},
    "report.goal": {"en": "Goal", "zh": "目标"},
    "report.question_type": {"en": "Kind of question", "zh": "问题类型"},
    # after an earlier finding whose data changed since (app/agent/context/memory.py writes the English)
    "report.stale_finding": {
        "en": "the data changed after this was found: recompute before relying on it",
        "zh": "得出这一发现之后数据有变动：请重新计算后再使用",
    },
    # the analysis plan's question_type (app/agent/tools/analysis_plan.py), as the report names it
    "report.question_type_description": {"en": "a description of the data", "zh": "描述数据"},
    "report.question_type_comparison": {"en": "a comparison of groups", "zh": "比较分组"},
    "report.question_type_relationship": {"en": "a relationship between columns", "zh": "列之间的关系"},
    "report.question_type_trend": {"en": "a trend over time", "zh": "随时间的趋势"},
    "report.question_type_forecast": {"en": "a forecast", "zh": "预测"},
    "report.question_type_attribution": {"en": "what contributes to a result", "zh": "影响结果的因素"},
    "report.question_type_retention": {"en": "who stays and who leaves", "zh": "留存"},
    "report.question_type_funnel": {"en": "steps of a funnel", "zh": "转化漏斗"},
    "report.question_type_segmentation": {"en": "groups of similar rows", "zh": "分群"},
    "report.question_type_prediction": {"en": "a prediction", "zh": "预测模型"},
    "report.question_type_data_quality": {"en": "the quality of the data", "zh": "数据质量"},
    "report.question_type_other": {"en": "other", "zh": "其他"},
    "report.plan_metrics": {"en": "Metrics", "zh": "指标"},
    "report.plan_dimensions": {"en": "Split by", "zh": "分组维度"},
    "report.method_plan": {"en": "Planned methods", "zh": "计划的方法"},
    "report.plan_limitations": {"en": "What the plan cannot establish", "zh": "计划无法确定的内容"},
    "report.verification": {"en": "Checks of the conclusions", "zh": "结论核对"},
    "report.verification_passed": {
        "en": "Every recorded claim matched the numbers and methods of the analyses it cites.",
        "zh": "所有记录的结论都与其引用的分析结果的数字和方法一致。",
    },
    "report.verification_failed": {
        "en": "Some claims did not match the analyses they cite; they are flagged on their evidence cards.",
        "zh": "部分结论与其引用的分析结果不一致，已在对应的证据卡片上标出。",
    },
    "report.check_failed": {"en": "Check failed", "zh": "核对未通过"},
    "report.check_partly_verified": {"en": "Partly checked", "zh": "部分核对通过"},
    "report.verification_partly_verified": {
        "en": "Some numbers did not match the analyses they cite (flagged on their evidence cards); the other "
        "numbers and claims matched.",
        "zh": "部分数字与其引用的分析结果不一致（已在对应的证据卡片上标出）；其余数字和结论都一致。",
    },
    "report.hypotheses": {"en": "Hypotheses", "zh": "假设"},
    "report.primary": {"en": "main question", "zh": "主要假设"},
    "report.alternative": {"en": "alternative explanation", "zh": "其他解释"},
    "report.baseline": {"en": "baseline (chance)", "zh": "基线（偶然）"},
    "report.supported": {"en": "supported", "zh": "有支持"},
    "report.inconclusive": {"en": "inconclusive", "zh": "尚无定论"},
    "report.unsupported": {"en": "not supported", "zh": "不支持"},
    "report.reproduction": {"en": "Reproduced by analysis.py", "zh": "由 analysis.py 复现"},
    "report.reproduction_passed": {
        "en": "analysis.py re-ran every tool call on the data file and re-computed all {n} numbers of "
        "the evidence: each one matches this report.",
        "zh": "analysis.py 在数据文件上重新运行了每个工具调用，重新计算了证据中的全部 {n} 个数字：每个都与本报告一致。",
    },
    "report.reproduction_failed": {
        "en": "analysis.py re-ran the tool calls, but {bad} of {total} numbers came out different "
        "(or {failures} calls failed): treat the affected evidence with care.",
        "zh": "analysis.py 重新运行了工具调用，但 {total} 个数字中有 {bad} 个结果不同（或 {failures} 个调用失败）："
        "请谨慎对待相关证据。",
    },
    "report.reproduction_title_failed": {"en": "Not reproduced by analysis.py", "zh": "analysis.py 未能复现"},
    "report.footer": {
        "en": "Generated by Verity. Every conclusion links to the analysis that produced it.",
        "zh": "由 Verity 生成。每条结论都可以追溯到产生它的分析。",
    },
    # ---- A report's first pages and its appendix (issue 28: the answer first, the workings after) ----
    "report.appendix": {
        "en": "Appendix: method, statistics and tool calls",
        "zh": "附录：分析方法、统计结果与工具调用",
    },
    "report.appendix_intro": {
        "en": "Everything behind the answer above: each piece of evidence with all its numbers, the other "
        "charts, the plan and every tool call (report.json holds the same in full).",
        "zh": "上文结论背后的全部内容：每条证据及其全部数字、其他图表、分析计划和每一次工具调用（report.json 中有完整记录）。",
    },
    "report.results": {"en": "The result", "zh": "结果一览"},
    "report.results_cut": {
        "en": "The first {shown} of {total} rows; all of them are in the appendix.",
        "zh": "仅列出 {total} 行中的前 {shown} 行，完整内容见附录。",
    },
    "report.how_sure": {"en": "How sure", "zh": "可信程度"},
    "report.how_sure_confidence": {"en": "Confidence in the answer: {level}", "zh": "对结论的把握：{level}"},
    "report.how_sure_passed": {
        "en": "each claim matches the analysis it cites",
        "zh": "每条结论都与所引用的分析一致",
    },
    "report.how_sure_reproduced": {
        "en": "analysis.py re-computed all {n} numbers from the data file and each one matches",
        "zh": "analysis.py 从数据文件重新算出全部 {n} 个数字，全部一致",
    },
    "report.caveats": {"en": "Caveats", "zh": "注意事项与局限"},
    "report.other_figures": {"en": "Other charts", "zh": "其他图表"},
    "report.stat.mean": {"en": "Average", "zh": "平均值"},
    "report.stat.median": {"en": "Median", "zh": "中位数"},
    "report.stat.n": {"en": "Count", "zh": "数量"},
    "report.stat.count": {"en": "Count", "zh": "数量"},
    "report.stat.sum": {"en": "Total", "zh": "合计"},
    "report.stat.total": {"en": "Total", "zh": "合计"},
    "report.stat.share": {"en": "Share", "zh": "占比"},
    "report.stat.std": {"en": "Standard deviation", "zh": "标准差"},
    "report.stat.min": {"en": "Smallest", "zh": "最小值"},
    "report.stat.max": {"en": "Largest", "zh": "最大值"},
    "report.stat.q1": {"en": "Lower quartile", "zh": "下四分位数"},
    "report.stat.q3": {"en": "Upper quartile", "zh": "上四分位数"},
    "report.stat.missing": {"en": "Missing", "zh": "缺失"},
    "report.stat.skew": {"en": "Skew", "zh": "偏度"},
    "report.stat.forecast": {"en": "Forecast", "zh": "预测值"},
    "report.stat.lower": {"en": "Low end of range", "zh": "区间下限"},
    "report.stat.upper": {"en": "High end of range", "zh": "区间上限"},
    "report.stat.r": {"en": "Correlation (r)", "zh": "相关系数 (r)"},
    "report.stat.r_squared": {"en": "Share explained (R²)", "zh": "解释比例 (R²)"},
    "report.stat.ci_low": {"en": "95% range, low", "zh": "95% 区间下限"},
    "report.stat.ci_high": {"en": "95% range, high", "zh": "95% 区间上限"},
    "report.stat.forecast_total": {"en": "Forecast total", "zh": "预测合计"},
    # ---- The report's own warnings ---------------------------------------------------------------
    "report_note.no_evidence": {
        "en": "No evidence was recorded: the answer is not backed by recorded analysis results.",
        "zh": "未记录任何证据：结论没有经过记录的分析结果支持。",
    },
    "report_note.failed_calls": {
        "en": "{n} tool call(s) failed; their results are not used.",
        "zh": "{n} 次工具调用失败，其结果未被使用。",
    },
    "report_note.open_tasks": {
        "en": "{n} planned step(s) were not completed: {subjects}.",
        "zh": "{n} 个计划步骤未完成：{subjects}。",
    },
    "report_note.unverified": {
        "en": "{n} number(s) in the answer could not be traced to any analysis result.",
        "zh": "结论中有 {n} 个数字无法追溯到任何分析结果。",
    },
    "report_note.no_answer": {"en": "The run produced no answer.", "zh": "本次分析没有生成结论。"},
    "report_note.verification_failed": {
        "en": "{n} claim(s) failed verification against the tool outputs they cite.",
        "zh": "有 {n} 条结论未通过与所引用分析结果的核对。",
    },
    # ---- analysis.py's comparison with the report --------------------------------------------------
    "script.compare": {
        "en": "The report's numbers, re-computed (✓ same at the precision the report gives, ✗ different)",
        "zh": "报告中的数字，重新计算（✓ 按报告给出的精度一致，✗ 不一致）",
    },
    "script.profile_reused": {
        "en": "not re-run: no number of the report rests on it; the run profiled this version of the data",
        "zh": "未重新运行：报告中没有数字依据它；运行时已为这一版数据做过概览",
    },
    "script.an_input": {"en": "an input of the call, not computed", "zh": "是调用的输入，不是计算结果"},
    "script.not_recomputed": {"en": "not computed by a re-run call", "zh": "没有重新运行的调用计算这个数"},
    "script.report": {"en": "report", "zh": "报告"},
    "script.rerun": {"en": "re-run", "zh": "重算"},
    "script.passed": {
        "en": "✓ Reproduced: all {matched} numbers match the report.",
        "zh": "✓ 已复现：全部 {matched} 个数字与报告一致。",
    },
    "script.failed": {
        "en": "✗ Not reproduced: {matched} of {total} numbers match; {failures} tool calls failed.",
        "zh": "✗ 未能复现：{total} 个数字中 {matched} 个一致；{failures} 个工具调用失败。",
    },
}
