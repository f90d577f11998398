"""The layout of image-like inputs: Keras's ``data_format`` argument."""

__all__ = ["standardize_data_format"]


def standardize_data_format(data_format):
    """Returns 'channels_last' (the default, for None) or 'channels_first'; ValueError,
    with Keras's message, for anything else."""
    if data_format is None:
        return "channels_last"
    standard = str(data_format).lower()
    if standard not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={data_format}")
    return standard
