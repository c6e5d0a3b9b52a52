from lockgate.connectors import errors
from lockgate.engine.errors import EngineError, SourceError


def test_every_connector_error_is_an_engine_error():
    classes = [getattr(errors, name) for name in errors.__all__]
    assert all(issubclass(cls, errors.ConnectorError) for cls in classes)
    assert issubclass(errors.ConnectorError, EngineError)


def test_an_invalid_split_is_also_a_source_error():
    assert issubclass(errors.InvalidSplit, SourceError)


def test_the_docstring_draws_every_connector_error():
    assert all(name in (errors.__doc__ or "") for name in errors.__all__)
