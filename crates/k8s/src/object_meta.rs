//! What every object of one run carries: its name and namespace, and the labels (tool,
//! instance, component) that selectors and `kubectl get -l` find the run's objects by.

use crate::options::K8sOptions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// The labels of the run's objects of one `component` (scenario, segment, merge).
pub fn labels(o: &K8sOptions, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "loadlab".to_string()),
        ("app.kubernetes.io/instance".to_string(), o.name.clone()),
        (
            "app.kubernetes.io/component".to_string(),
            component.to_string(),
        ),
    ])
}

/// The metadata of the run's object `name`, of one `component`.
pub fn metadata(o: &K8sOptions, name: &str, component: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: o.namespace.clone(),
        labels: Some(labels(o, component)),
        ..Default::default()
    }
}
