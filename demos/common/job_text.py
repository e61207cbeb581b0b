"""Pieces of softwire's job text format that the demos' job generators share.

attr_text(name, value): an op attribute as the job format writes it (docs/JOBS.md): a bool,
a list of ints, a float (written so it reads back exactly) or an int.
"""


def attr_text(name, value):
    if isinstance(value, bool):
        text = f"bool: {'true' if value else 'false'}"
    elif isinstance(value, (list, tuple)):
        text = "ints { value: [" + ", ".join(str(v) for v in value) + "] }"
    elif isinstance(value, float):
        text = f"float: {value!r}"
    else:
        text = f"int: {value}"
    return f'attr {{ name: "{name}" {text} }}'
