"""Validates JSON documents against a JSON Schema with python3-jsonschema
(Debian's package), the schema itself first: a real validator, not a
hand-written subset. Exit 77 (skipped) where the package is missing.
    validate_json.py SCHEMA DOCUMENT...
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (apt-get install python3-jsonschema): skipped")
    sys.exit(77)

with open(sys.argv[1], encoding="utf-8") as f:
    schema = json.load(f)
validator_class = jsonschema.validators.validator_for(schema)
validator_class.check_schema(schema)
validator = validator_class(schema)
failed = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        print(f"{path}: at /{'/'.join(str(p) for p in e.path)}: {e.message[:300]}")
    failed += bool(errors)
    if not errors:
        print(f"{path}: valid against {sys.argv[1]}")
sys.exit(1 if failed else 0)
