package dev.idgen.spring;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import java.util.List;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.support.AutowireCandidateQualifier;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * One {@link IdSource} bean per name in {@code idgen.client.sequences}: bean {@code idSource-NAME}, qualified
 * {@code @IdSequence("NAME")} and {@code @Qualifier("NAME")}, made by {@link IdGenClient#sequence} of the
 * context's client (so it requests its first lease at start). Bean definitions must exist before the properties
 * bean does, hence the environment is read here with Spring Boot's binder.
 */
class IdSourceRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {
  static final String PROPERTY = "idgen.client.sequences";

  private Environment environment;
  private BeanFactory beanFactory;

  @Override
  public void setEnvironment(Environment environment) {
    this.environment = environment;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
    List<String> names = Binder.get(environment).bind(PROPERTY, Bindable.listOf(String.class)).orElse(List.of());
    BeanFactory factory = beanFactory;
    for (String name : names) {
      RootBeanDefinition source =
          new RootBeanDefinition(IdSource.class, () -> factory.getBean(IdGenClient.class).sequence(name));
      source.addQualifier(new AutowireCandidateQualifier(IdSequence.class, name));
      source.addQualifier(new AutowireCandidateQualifier(Qualifier.class, name));
      registry.registerBeanDefinition("idSource-" + name, source);
    }
  }
}
