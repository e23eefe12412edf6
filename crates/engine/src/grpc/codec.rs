//! A message between its JSON form (what the scenario writes, what checks read) and its
//! protobuf encoding in gRPC's length-prefixed frames.

use prost::Message;
use prost_reflect::{DeserializeOptions, DynamicMessage, MessageDescriptor, SerializeOptions};

use crate::grpc_reply::PREFIX;

/// Encodes the JSON text `json` as a message of type `input` and appends it to `out` as one
/// uncompressed gRPC frame; returns the payload's length.
pub fn encode_json(
    input: &MessageDescriptor,
    json: &[u8],
    out: &mut Vec<u8>,
) -> Result<usize, String> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let message = DynamicMessage::deserialize_with_options(
        input.clone(),
        &mut de,
        &DeserializeOptions::new().deny_unknown_fields(true),
    )
    .and_then(|m| de.end().map(|()| m))
    .map_err(|e| format!("the message does not fit {}: {e}", input.full_name()))?;
    Ok(frame_message(&message, out))
}

/// Replaces the JSON body a template rendered by the message it stands for, framed; returns
/// the message's size. A value that does not fit the message's type is an error (the call
/// is then not sent).
pub fn encode_rendered(
    call: &super::PreparedGrpc,
    parts: &mut crate::request::RequestParts,
) -> Result<u64, String> {
    let mut frame = Vec::new();
    let payload = encode_json(&call.input, parts.body().unwrap_or(b"{}"), &mut frame)?;
    parts.replace_body(&frame);
    Ok(payload as u64)
}

/// Appends `message` to `out` as one uncompressed gRPC frame; returns the payload's length.
pub fn frame_message(message: &impl Message, out: &mut Vec<u8>) -> usize {
    let len = message.encoded_len();
    out.reserve(PREFIX + len);
    out.push(0);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    message
        .encode(out)
        .expect("a Vec grows to take any message");
    len
}

/// The JSON form of a response body: its one message (`streaming` false), or the array of its
/// messages. Field names as the `.proto` writes them, fields at their default value included,
/// enums by name, 64-bit integers as numbers.
pub fn decode_json(
    output: &MessageDescriptor,
    body: &[u8],
    streaming: bool,
) -> Result<serde_json::Value, String> {
    let options = SerializeOptions::new()
        .use_proto_field_name(true)
        .skip_default_fields(false)
        .stringify_64_bit_integers(false);
    let mut messages = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        if rest.len() < PREFIX {
            return Err("the response ends inside a gRPC frame's prefix".into());
        }
        if rest[0] != 0 {
            return Err("the response message is compressed (not supported)".into());
        }
        let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
        let payload = rest
            .get(PREFIX..PREFIX + len)
            .ok_or("the response ends inside a gRPC message")?;
        let message = DynamicMessage::decode(output.clone(), payload)
            .map_err(|e| format!("the response is not a {}: {e}", output.full_name()))?;
        let value = message
            .serialize_with_options(serde_json::value::Serializer, &options)
            .map_err(|e| e.to_string())?;
        messages.push(value);
        rest = &rest[PREFIX + len..];
    }
    if streaming {
        return Ok(serde_json::Value::Array(messages));
    }
    match messages.len() {
        1 => Ok(messages.pop().expect("one message")),
        n => Err(format!("a unary call answered {n} messages instead of one")),
    }
}
