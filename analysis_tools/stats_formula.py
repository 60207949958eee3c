"""Safe evaluation of user model formulas for `curve_fit`.

A formula such as ``b1*(1-exp(-b2*x))`` is parsed with `ast` and compiled into nested closures
over numpy functions. Only arithmetic, numbers, the variable names, the parameters b1..b9, `pi`,
and a short list of functions are accepted; anything else (attributes, subscripts, calls to other
names, keywords, comprehensions, strings) is rejected before anything is evaluated, so a formula
can never run arbitrary code. The compiled function works on real and complex arrays, so the
Jacobian can be taken by complex-step differentiation (exact to machine precision, unlike finite
differences).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

FUNCTIONS: dict[str, Callable] = {
    "exp": np.exp,
    "log": np.log,
    "ln": np.log,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arctan": np.arctan,
    "atan": np.arctan,
    "power": np.power,
}
CONSTANTS = {"pi": np.pi}
_PARAM = re.compile(r"^b([1-9])$")
_MAX_LENGTH = 500
_BINARY = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide, ast.Pow: np.power}


class FormulaError(ValueError):
    """The formula is not in the allowed grammar (the message says what is wrong)."""


@dataclass
class Formula:
    text: str
    n_params: int
    variables: list[str]  # variable names used, in order of first use
    func: Callable[[dict, np.ndarray], np.ndarray]

    def __call__(self, env: dict[str, np.ndarray], params: np.ndarray) -> np.ndarray:
        return self.func(env, params)

    def jacobian(self, env: dict[str, np.ndarray], params: np.ndarray, n: int) -> np.ndarray:
        """d model / d params by complex step: Im f(b + ih e_j) / h, no subtractive cancellation."""
        jac = np.empty((n, self.n_params))
        for j in range(self.n_params):
            h = 1e-20 * max(1.0, abs(params[j]))
            shifted = params.astype(complex)
            shifted[j] += 1j * h
            jac[:, j] = np.broadcast_to(np.imag(self.func(env, shifted)) / h, (n,))
        return jac


def parse_formula(text: str, variables: set[str] | frozenset[str] = frozenset({"x"})) -> Formula:
    """Parse and compile `text`; `variables` are the data names the formula may use."""
    if not isinstance(text, str) or not text.strip():
        raise FormulaError("The formula is empty.")
    if len(text) > _MAX_LENGTH:
        raise FormulaError(f"The formula is longer than {_MAX_LENGTH} characters.")
    cleaned = text.strip()
    if "=" in cleaned and not any(op in cleaned for op in ("==", "<=", ">=")):
        cleaned = cleaned.split("=", 1)[1]  # accept "y = b1*x" as well as "b1*x"
    cleaned = cleaned.replace("^", "**")  # spreadsheet power; as Python's xor it would bind too loosely
    try:
        tree = ast.parse(cleaned.strip(), mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"The formula is not valid arithmetic ({exc.msg}).") from None
    used_params: set[int] = set()
    used_vars: list[str] = []
    func = _compile(tree.body, set(variables), used_params, used_vars)
    if not used_params:
        raise FormulaError("The formula has no parameters; name them b1, b2, ... (up to b9).")
    n = max(used_params)
    missing = sorted(set(range(1, n + 1)) - used_params)
    if missing:
        raise FormulaError(f"Parameters must be numbered without gaps: b{missing[0]} is missing.")
    if not used_vars:
        raise FormulaError(f"The formula does not use the variable ({', '.join(sorted(variables))}).")
    return Formula(text, n, used_vars, func)


def _compile(node: ast.AST, variables: set[str], params: set[int], used: list[str]) -> Callable:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise FormulaError(f"Only numbers are allowed as constants, not {node.value!r}.")
        value = float(node.value)
        return lambda env, b: value
    if isinstance(node, ast.Name):
        return _name(node.id, variables, params, used)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        op = _BINARY[type(node.op)]
        left, right = _compile(node.left, variables, params, used), _compile(node.right, variables, params, used)
        return lambda env, b: op(left(env, b), right(env, b))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _compile(node.operand, variables, params, used)
        if isinstance(node.op, ast.USub):
            return lambda env, b: np.negative(operand(env, b))
        return operand
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
            raise FormulaError(f"Function {name!r} is not allowed; use one of {sorted(FUNCTIONS)}.")
        if node.keywords:
            raise FormulaError("Function arguments must be positional.")
        fn = FUNCTIONS[node.func.id]
        arity = 2 if node.func.id == "power" else 1
        if len(node.args) != arity:
            raise FormulaError(f"{node.func.id}() takes {arity} argument(s).")
        args = [_compile(a, variables, params, used) for a in node.args]
        if arity == 1:
            (arg,) = args
            return lambda env, b: fn(arg(env, b))
        return lambda env, b: fn(args[0](env, b), args[1](env, b))
    raise FormulaError(
        f"{type(node).__name__} is not allowed in a formula; use arithmetic, numbers, "
        f"the variable, b1..b9 and {sorted(FUNCTIONS)}."
    )


def _name(name: str, variables: set[str], params: set[int], used: list[str]) -> Callable:
    match = _PARAM.match(name)
    if match:
        index = int(match.group(1))
        params.add(index)
        return lambda env, b: b[index - 1]
    if name in variables:
        if name not in used:
            used.append(name)
        return lambda env, b: env[name]
    if name in CONSTANTS:
        value = CONSTANTS[name]
        return lambda env, b: value
    raise FormulaError(f"Unknown name {name!r}; the formula may use {sorted(variables)}, b1..b9 and pi.")
