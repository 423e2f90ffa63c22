//! The campaign file's keys, derived from the types it is read into
//! ([`CampaignFile`]): what `pktlab docs campaign-keys` lists, and the
//! user guide must document, one row per key.

use crate::file::CampaignFile;

/// Parses campaign files as `bench -f` does: `FILE: error` for each one
/// that does not parse. A file that cannot be read is bad input.
pub fn check_files(files: &[std::path::PathBuf]) -> Result<Vec<String>, crate::CampaignError> {
    let mut failures = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).map_err(|e| {
            crate::CampaignError::Usage(format!(
                "cannot read {}: {}",
                file.display(),
                pktlab_io::os_message(&e)
            ))
        })?;
        if let Err(e) = CampaignFile::parse(&text) {
            failures.push(format!("{}: {e}", file.display()));
        }
    }
    Ok(failures)
}

/// Every key of a campaign file: `TABLE<TAB>KEY<TAB>TYPE<TAB>required|optional`.
pub fn campaign_keys() -> Result<Vec<String>, String> {
    schema_keys(CampaignFile::json_schema().as_value())
}

/// Every leaf key of the schema: `(top level)`, `[lab]`, `[[traffic]]`,
/// `[[lab.generator]]`, each with the key's type and whether it is required.
pub fn schema_keys(schema: &serde_json::Value) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    walk_table(schema, schema, "", false, &mut out)?;
    Ok(out)
}

fn walk_table(
    root: &serde_json::Value,
    table: &serde_json::Value,
    path: &str,
    array: bool,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let header = match (path, array) {
        ("", _) => "(top level)".to_string(),
        (p, false) => format!("[{p}]"),
        (p, true) => format!("[[{p}]]"),
    };
    let required: Vec<&str> = table["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|k| k.as_str()).collect())
        .unwrap_or_default();
    let Some(props) = table["properties"].as_object() else {
        return Err(format!("{header}: the schema has no properties"));
    };
    for (key, value) in props {
        let value = resolve(root, value)?;
        let sub_path = match path {
            "" => key.clone(),
            p => format!("{p}.{key}"),
        };
        if value["properties"].is_object() {
            walk_table(root, value, &sub_path, false, out)?;
            continue;
        }
        let items = resolve(root, &value["items"])?;
        if items["properties"].is_object() {
            walk_table(root, items, &sub_path, true, out)?;
            continue;
        }
        let need = match required.contains(&key.as_str()) {
            true => "required",
            false => "optional",
        };
        out.push(format!(
            "{header}\t{key}\t{}\t{need}",
            type_name(value, items)
        ));
    }
    Ok(())
}

/// A `$ref` to `#/$defs/NAME` replaced by the definition.
fn resolve<'a>(
    root: &'a serde_json::Value,
    value: &'a serde_json::Value,
) -> Result<&'a serde_json::Value, String> {
    match value["$ref"].as_str() {
        None => Ok(value),
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").unwrap_or(r);
            match &root["$defs"][name] {
                serde_json::Value::Null => Err(format!("the schema has no definition {r}")),
                def => Ok(def),
            }
        }
    }
}

/// `string`, `integer`, `array of string`: the JSON type without `null`.
fn type_name(value: &serde_json::Value, items: &serde_json::Value) -> String {
    let base = |v: &serde_json::Value| -> String {
        match &v["type"] {
            serde_json::Value::String(t) => t.clone(),
            serde_json::Value::Array(ts) => ts
                .iter()
                .filter_map(|t| t.as_str())
                .filter(|t| *t != "null")
                .collect::<Vec<_>>()
                .join(" or "),
            _ => "any".to_string(),
        }
    };
    match base(value).as_str() {
        "array" => format!("array of {}", base(items)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_a_schema_by_hand() {
        // A schema written by hand in the shape schemars derives.
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "name": {"type": ["string", "null"]},
                "lab": {"$ref": "#/$defs/Lab"},
                "traffic": {"type": "array", "items": {"$ref": "#/$defs/T"}},
            },
            "$defs": {
                "Lab": {"type": "object", "properties": {
                    "ifaces": {"type": "array", "items": {"type": "string"}},
                    "generator": {"type": "array", "items": {"$ref": "#/$defs/G"}},
                }},
                "G": {"type": "object", "required": ["iface"], "properties": {
                    "iface": {"type": "string"},
                }},
                "T": {"type": "object", "properties": {
                    "sizes": {"type": ["array", "null"], "items": {"type": "integer"}},
                }},
            }
        });
        let keys = schema_keys(&schema).unwrap();
        assert_eq!(
            keys,
            [
                // Keys in the schema's (alphabetical) order: generator, ifaces.
                "[[lab.generator]]\tiface\tstring\trequired",
                "[lab]\tifaces\tarray of string\toptional",
                "(top level)\tname\tstring\toptional",
                "[[traffic]]\tsizes\tarray of integer\toptional",
            ]
        );
    }

    #[test]
    fn the_campaign_files_keys_come_from_its_types() {
        let keys = campaign_keys().unwrap();
        for key in [
            "(top level)\tname\tstring\toptional",
            "[run]\titerations\tinteger\toptional",
            "[[traffic]]\tname\tstring\trequired",
            "[[traffic]]\tsizes\tarray of integer\toptional",
            "[[lab.generator]]\tiface\tstring\trequired",
            "[[config]]\tapply\tarray of string\toptional",
        ] {
            assert!(keys.iter().any(|k| k == key), "{key} not in {keys:#?}");
        }
        assert!(
            !keys.iter().any(|k| k.contains("\tgenerator\t")),
            "{keys:#?}"
        );
    }
}
