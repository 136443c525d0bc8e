package io.leasekeeper.support;

import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.boot.context.properties.bind.Name;

/** The property names a {@code @ConfigurationProperties} record binds, in kebab case, nested records flattened. */
public final class SettingNames {

    private SettingNames() {}

    /** Every setting of the record under {@code prefix}: its components' names, or their {@code @Name}. */
    public static Set<String> of(Class<?> type, String prefix) {
        Set<String> names = new TreeSet<>();
        RecordComponent[] components = type.getRecordComponents();
        Parameter[] parameters;
        try {
            parameters = type.getDeclaredConstructor(Arrays.stream(components).map(RecordComponent::getType)
                    .toArray(Class<?>[]::new)).getParameters();
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
        for (int i = 0; i < components.length; i++) {
            RecordComponent component = components[i];
            Name renamed = parameters[i].getAnnotation(Name.class);
            String name = prefix + "." + kebab(renamed != null ? renamed.value() : component.getName());
            if (component.getType().isRecord()) {
                names.addAll(of(component.getType(), name));
            } else {
                names.add(name);
            }
        }
        return names;
    }

    /** {@code maxTtl} as {@code max-ttl}. */
    public static String kebab(String name) {
        return name.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    }
}
