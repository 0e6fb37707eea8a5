"""Arrow tables to pandas, as rosbags-dataframe lays them out (imported only when asked)."""

import pyarrow as pa


def flatten(table: "pa.Table") -> "pa.Table":
    """Struct columns split into their members, with dotted names, to the leaves."""
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def _nested(t: "pa.DataType") -> bool:
    return (pa.types.is_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_large_list(t)
            or pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t))


def _loose(t: "pa.DataType") -> "pa.DataType":
    """`t` with nullable list items: the type a pickled `pd.ArrowDtype` column comes back as
    (so partitions from Dask workers concatenate with the meta, not fall back to objects)."""
    if pa.types.is_list(t):
        return pa.list_(_loose(t.value_type))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_loose(t.value_type), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _loose(f.type)) for f in t])
    return t


def to_pandas(table: "pa.Table", arrow_arrays: bool = False):
    """A flattened table as a DataFrame indexed by receive time (the first column, ns).
    Arrays are numpy arrays in object cells (as rosbags-dataframe has them), or with
    `arrow_arrays` columns of `pd.ArrowDtype` (which Dask keeps as they are, where it turns
    object columns into strings)."""
    import pandas as pd

    flat = flatten(table)
    time_name = flat.schema.names[0]
    mapper = None
    if arrow_arrays:
        flat = flat.cast(pa.schema([pa.field(f.name, _loose(f.type)) for f in flat.schema],
                                   metadata=flat.schema.metadata))

        def mapper(t):
            return pd.ArrowDtype(t) if _nested(t) else None
    df = flat.drop_columns([time_name]).to_pandas(types_mapper=mapper)
    df.index = pd.to_datetime(flat.column(time_name).to_numpy(), unit="ns")
    df.index.name = "time"
    return df
