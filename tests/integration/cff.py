# SPDX-License-Identifier: MIT
"""A CITATION.cff checked against the Citation File Format 1.2.0 schema
(https://citation-file-format.github.io/1.2.0/schema): its required keys, the keys it allows at the
top and in an author, and the shapes of the values a run's CITATION.cff uses. Written from the
schema's text, for tests: problems(text) is a list of what is wrong, empty when nothing is."""
import re

import yaml

TOP = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi", "identifiers",
       "keywords", "license", "license-url", "message", "preferred-citation", "references", "repository",
       "repository-artifact", "repository-code", "title", "type", "url", "version"}
REQUIRED = {"authors", "cff-version", "message", "title"}
PLACE = {"address", "alias", "city", "country", "email", "fax", "orcid", "post-code", "region", "tel", "website"}
PERSON = PLACE | {"affiliation", "family-names", "given-names", "name-particle", "name-suffix"}
ENTITY = PLACE | {"date-end", "date-start", "location", "name"}
DATE = re.compile(r"^[0-9]{4}-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01])$")


def text(v):
    return isinstance(v, str) and len(v) >= 1


def unique(items):
    seen = []
    for x in items:
        if x in seen:
            return False
        seen.append(x)
    return True


def load(source):
    return yaml.load(source, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def problems(source):
    try:
        doc = load(source)
    except yaml.YAMLError as e:
        return [f"not YAML: {e}"]
    if not isinstance(doc, dict):
        return ["not a mapping"]
    out = [f"key {k!r} is not in the schema" for k in sorted(set(doc) - TOP)]
    out += [f"required key {k!r} missing" for k in sorted(REQUIRED - set(doc))]
    if doc.get("cff-version") != "1.2.0":
        out.append(f"cff-version is {doc.get('cff-version')!r}, not the string 1.2.0")
    for k in ("message", "title", "abstract"):
        if k in doc and not text(doc[k]):
            out.append(f"{k} is not a non-empty string")
    if "type" in doc and doc["type"] not in ("dataset", "software"):
        out.append(f"type {doc['type']!r} is neither dataset nor software")
    authors = doc.get("authors")
    if not isinstance(authors, list) or not authors or not unique(authors):
        out.append("authors is not a non-empty list of unique items")
    else:
        for a in authors:
            if not isinstance(a, dict) or not (
                    set(a) <= PERSON or ("name" in a and text(a["name"]) and set(a) <= ENTITY)):
                out.append(f"author {a!r} is neither a person nor an entity")
    if "date-released" in doc and not (isinstance(doc["date-released"], str) and DATE.match(doc["date-released"])):
        out.append(f"date-released {doc['date-released']!r} is not a YYYY-MM-DD string")
    ids = doc.get("identifiers")
    if ids is not None:
        if not isinstance(ids, list) or not ids or not unique(ids):
            out.append("identifiers is not a non-empty list of unique items")
        else:
            for i in ids:
                if (not isinstance(i, dict) or set(i) - {"type", "value", "description"} or
                        i.get("type") not in ("doi", "url", "swh", "other") or not text(i.get("value")) or
                        ("description" in i and not text(i["description"]))):
                    out.append(f"identifier {i!r} is not one")
    kw = doc.get("keywords")
    if kw is not None and (not isinstance(kw, list) or not kw or not all(text(k) for k in kw) or not unique(kw)):
        out.append("keywords is not a non-empty list of unique non-empty strings")
    if "version" in doc and not (text(doc["version"]) or isinstance(doc["version"], (int, float))):
        out.append("version is neither a non-empty string nor a number")
    return out
