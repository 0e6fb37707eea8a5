"""Arrow tables to pandas, as rosbags-dataframe lays them out (imported only when asked)."""

import pyarrow as pa


def flatten(table: "pa.Table") -> "pa.Table":
    """Struct columns split into their members, with dotted names, to the leaves."""
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table


def to_pandas(table: "pa.Table"):
    """A flattened table as a DataFrame indexed by receive time (the first column, ns)."""
    import pandas as pd

    flat = flatten(table)
    time_name = flat.schema.names[0]
    df = flat.drop_columns([time_name]).to_pandas()
    df.index = pd.to_datetime(flat.column(time_name).to_numpy(), unit="ns")
    df.index.name = "time"
    return df
