"""The API described for machines: an OpenAPI 3.1 document built from the procedure
registry and the serializers that validate each procedure's input, and the reference
page rendered from it."""
