"""The labels of the report pages and documents, in English and Chinese."""

from __future__ import annotations

LABELS: dict[str, dict[str, str]] = {
    "title": {"en": "Analysis report", "zh": "分析报告"},
    "question": {"en": "Question", "zh": "问题"},
    "answer": {"en": "Conclusions", "zh": "结论"},
    "evidence": {"en": "Evidence", "zh": "证据"},
    "evidence_intro": {"en": "Each conclusion and the analysis that backs it.",
                       "zh": "每条结论及支持它的分析结果。"},
    "no_evidence": {"en": "No evidence was recorded for this answer.", "zh": "这个回答没有记录任何证据。"},
    "confidence": {"en": "Confidence", "zh": "可信度"},
    "high": {"en": "high", "zh": "高"},
    "medium": {"en": "medium", "zh": "中"},
    "low": {"en": "low", "zh": "低"},
    "method": {"en": "Method", "zh": "方法"},
    "result": {"en": "Result", "zh": "结果"},
    "metrics": {"en": "Key numbers", "zh": "关键数字"},
    "metric": {"en": "Measure", "zh": "指标"},
    "value": {"en": "Value", "zh": "数值"},
    "sample_size": {"en": "Sample size", "zh": "样本量"},
    "limitations": {"en": "Limitations", "zh": "局限性"},
    "all_limitations": {"en": "Limitations of this analysis", "zh": "本次分析的局限性"},
    "based_on": {"en": "Based on tool calls", "zh": "依据的工具调用"},
    "figures": {"en": "Charts", "zh": "图表"},
    "figure": {"en": "Figure", "zh": "图"},
    "supports": {"en": "Supports", "zh": "支持"},
    "see_figure": {"en": "See", "zh": "见"},
    "from_call": {"en": "made by", "zh": "来自"},
    "how": {"en": "How this was analysed", "zh": "分析过程"},
    "methods_used": {"en": "Methods used", "zh": "使用的方法"},
    "tools_used": {"en": "Tools used", "zh": "使用的工具"},
    "plan": {"en": "Plan", "zh": "分析计划"},
    "no_plan": {"en": "No plan was recorded.", "zh": "没有记录分析计划。"},
    "task": {"en": "Step", "zh": "步骤"},
    "status": {"en": "Status", "zh": "状态"},
    "pending": {"en": "pending", "zh": "待处理"},
    "in_progress": {"en": "in progress", "zh": "进行中"},
    "completed": {"en": "completed", "zh": "已完成"},
    "deleted": {"en": "deleted", "zh": "已删除"},
    "completed_by_evidence": {"en": "by evidence", "zh": "由证据完成"},
    "completed_by_model": {"en": "by the analyst", "zh": "由分析员标记"},
    "tool_calls": {"en": "Tool calls", "zh": "工具调用"},
    "tool": {"en": "Tool", "zh": "工具"},
    "arguments": {"en": "Arguments", "zh": "参数"},
    "ok": {"en": "ok", "zh": "成功"},
    "failed": {"en": "failed", "zh": "失败"},
    "duration": {"en": "Time (ms)", "zh": "耗时（毫秒）"},
    "id": {"en": "Id", "zh": "编号"},
    "datasets": {"en": "Data", "zh": "数据"},
    "file": {"en": "File", "zh": "文件"},
    "sheet": {"en": "Sheet", "zh": "工作表"},
    "rows": {"en": "Rows", "zh": "行数"},
    "rows_unit": {"en": "rows", "zh": "行"},
    "columns": {"en": "Columns", "zh": "列"},
    "columns_unit": {"en": "columns", "zh": "列"},
    "unverified_title": {"en": "Numbers to double-check", "zh": "需要核实的数字"},
    "unverified_text": {"en": "These numbers in the conclusions were not found in any recorded analysis result. "
                                "Treat them with caution.",
                        "zh": "结论中的以下数字没有在任何分析结果中找到，请谨慎对待。"},
    "warnings": {"en": "Warnings", "zh": "注意事项"},
    "model": {"en": "Model", "zh": "模型"},
    "builtin": {"en": "built-in analyst", "zh": "内置分析员"},
    "generated": {"en": "Generated", "zh": "生成时间"},
    "run": {"en": "Run", "zh": "运行编号"},
    "analysis_plan": {"en": "Analysis plan", "zh": "分析计划"},
    "guidance": {"en": "What the analysis was told", "zh": "分析所依据的规则与资料"},
    "guidance_note": {"en": "Besides the data, the analysis followed these rules and definitions and consulted these "
                            "notes and earlier findings (notes and earlier findings are reference only).",
                      "zh": "除数据外，分析遵循了以下规则和定义，并参考了以下资料和以往结论（资料和以往结论仅作参考）。"},
    "guidance_rule": {"en": "Workspace rule", "zh": "工作区规则"},
    "guidance_definition": {"en": "Confirmed by you", "zh": "你确认的定义"},
    "guidance_knowledge": {"en": "Reference note", "zh": "参考资料"},
    "guidance_memory": {"en": "Earlier finding", "zh": "以往结论"},
    "goal": {"en": "Goal", "zh": "目标"},
    "question_type": {"en": "Kind of question", "zh": "问题类型"},
    "plan_metrics": {"en": "Metrics", "zh": "指标"},
    "plan_dimensions": {"en": "Split by", "zh": "分组维度"},
    "method_plan": {"en": "Planned methods", "zh": "计划的方法"},
    "plan_limitations": {"en": "What the plan cannot establish", "zh": "计划无法确定的内容"},
    "verification": {"en": "Checks of the conclusions", "zh": "结论核对"},
    "verification_passed": {"en": "Every recorded claim matched the numbers and methods of the analyses it cites.",
                            "zh": "所有记录的结论都与其引用的分析结果的数字和方法一致。"},
    "verification_failed": {"en": "Some claims did not match the analyses they cite; they are flagged on their evidence cards.",
                            "zh": "部分结论与其引用的分析结果不一致，已在对应的证据卡片上标出。"},
    "check_failed": {"en": "Check failed", "zh": "核对未通过"},
    "hypotheses": {"en": "Hypotheses", "zh": "假设"},
    "primary": {"en": "main question", "zh": "主要假设"},
    "alternative": {"en": "alternative explanation", "zh": "其他解释"},
    "baseline": {"en": "baseline (chance)", "zh": "基线（偶然）"},
    "supported": {"en": "supported", "zh": "有支持"},
    "inconclusive": {"en": "inconclusive", "zh": "尚无定论"},
    "unsupported": {"en": "not supported", "zh": "不支持"},
    "reproduction": {"en": "Reproduced by analysis.py", "zh": "由 analysis.py 复现"},
    "reproduction_passed": {"en": "analysis.py re-ran every tool call on the data file and re-computed all {n} numbers of "
                                  "the evidence: each one matches this report.",
                            "zh": "analysis.py 在数据文件上重新运行了每个工具调用，重新计算了证据中的全部 {n} 个数字：每个都与本报告一致。"},
    "reproduction_failed": {"en": "analysis.py re-ran the tool calls, but {bad} of {total} numbers came out different "
                                  "(or {failures} calls failed): treat the affected evidence with care.",
                            "zh": "analysis.py 重新运行了工具调用，但 {total} 个数字中有 {bad} 个结果不同（或 {failures} 个调用失败）："
                                  "请谨慎对待相关证据。"},
    "reproduction_title_failed": {"en": "Not reproduced by analysis.py", "zh": "analysis.py 未能复现"},
    "footer": {"en": "Generated by Verity. Every conclusion links to the analysis that produced it.",
               "zh": "由 Verity 生成。每条结论都可以追溯到产生它的分析。"},
}


def label(key: str, language: str) -> str:
    entry = LABELS.get(key)
    if entry is None:
        return key
    return entry.get(language) or entry["en"]


def labels(language: str) -> dict[str, str]:
    """All labels in one language (what the templates use)."""
    language = language if language in ("en", "zh") else "en"
    return {key: label(key, language) for key in LABELS}
