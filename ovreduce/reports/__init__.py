"""The documents ovreduce produces, one module per command, and the one way to turn them into JSON.

Every document class is a frozen dataclass whose field names are the JSON keys, in the order they are
written. The CLI renders them (text, JUnit, SARIF, JSON), and the REST API uses the same classes as its
response models, so a renamed field is a type error everywhere at once rather than a silent change of the
wire format. Documents hold plain values only (strings, numbers, lists of dims), never server-side state:
nothing in them is a file the reader did not name.

=========================  ===========================================================================
document                   class
=========================  ===========================================================================
``ovreduce.check/v1``      :class:`.check.CheckDocument` (one :class:`.check.ModelCheck` per model)
``ovreduce.inspect/v1``    :class:`.inspect.InspectDocument`
``ovreduce.run/v1``        :class:`.run.RunDocument` (its :class:`.run.Comparison` s)
``ovreduce.audit/v1``      :class:`.audit.AuditDocument`
``ovreduce.conform/v1``    :class:`.conform.ConformDocument`
``ovreduce.devices/v1``    :class:`.devices.DevicesDocument`
=========================  ===========================================================================

A class lives in the module of the command whose document defines it, and the others import it from there
(a :class:`~.devices.Device` names the device a run, an audit or a conform ran on; an audit's and a conform's
rows carry a run's :class:`~.run.Comparison` figures inline, as :class:`~.run.Measured`). :mod:`.common` holds
what is no command's: :class:`~.common.JsonDocument`, :class:`~.common.ErrorInfo` and the JSON writers.
Importing one module imports only what its documents use: ``ovreduce check`` never defines the others.

Measured values (errors, times) are floats; a value that is not finite stays a float (NaN, inf) here, and
every JSON document writes it as one of the strings "NaN", "Infinity", "-Infinity" (:data:`.common.NON_FINITE`,
KServe's spelling, which every strict JSON parser accepts): the CLI (:func:`.common.dumps`),
:func:`.common.to_json` and the REST API alike.
"""
