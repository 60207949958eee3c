"""Isolated execution for run_python (bubblewrap / namespaces). Built in a later issue; the
package holds no web or agent imports."""
